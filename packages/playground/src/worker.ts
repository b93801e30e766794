/**
 * @file The worker: runs what the page asks (a program of the language, or TypeScript)
 * and posts the reply. The page gives it a time limit and terminates it past that, so a
 * loop that never ends stops here and not in the page.
 */
import type { Reply, Request } from "./protocol.js";
import { runProgram } from "./run-program.js";
import { runTypeScript } from "./run-typescript.js";

interface WorkerScope {
  onmessage: ((event: { data: Request }) => void) | null;
  postMessage(message: Reply): void;
}
const scope = globalThis as unknown as WorkerScope;

scope.onmessage = ({ data }) => {
  switch (data.kind) {
    case "program":
      return scope.postMessage(runProgram(data));
    case "typescript":
      return scope.postMessage(runTypeScript(data));
  }
};

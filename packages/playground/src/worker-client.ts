/**
 * @file Runs requests on a worker with a time limit. A request past its limit gets the
 * worker terminated (nothing else stops a synchronous loop), and the next one a new
 * worker; a new request while one runs does the same, so a run is never stuck behind
 * another.
 */
import type { Reply, Request } from "./protocol.js";

/** A request as the page makes it: the client numbers it. */
type Ask = Request extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never;

type Outcome = { kind: "reply"; reply: Reply } | { kind: "timeout"; ms: number } | { kind: "cancelled" } | { kind: "crashed"; message: string };

export class WorkerClient {
  private worker: Worker | null = null;
  private pending: ((o: Outcome) => void) | null = null;
  private next = 1;

  constructor(private readonly url: string) {}

  private stop(outcome: Outcome): void {
    this.worker?.terminate();
    this.worker = null;
    const settle = this.pending;
    this.pending = null;
    settle?.(outcome);
  }

  /** Send a request (without its id) and wait at most `ms` for the reply. */
  run(request: Ask, ms: number): Promise<Outcome> {
    if (this.pending !== null) this.stop({ kind: "cancelled" });
    const worker = (this.worker ??= new Worker(this.url));
    const id = this.next++;
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => this.stop({ kind: "timeout", ms }), ms);
      this.pending = (o) => {
        clearTimeout(timer);
        resolve(o);
      };
      worker.onmessage = (e: MessageEvent<Reply>) => {
        if (e.data.id !== id || this.pending === null) return;
        const settle = this.pending;
        this.pending = null;
        settle({ kind: "reply", reply: e.data });
      };
      worker.onerror = (e) => {
        e.preventDefault();
        this.stop({ kind: "crashed", message: e.message });
      };
      worker.postMessage({ ...request, id } as Request);
    });
  }
}

export type { Outcome };

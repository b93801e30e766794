#!/usr/bin/env node
/**
 * @file `wengert-gradbench`: wengert as a GradBench tool.
 *
 * Reads the eval's messages from stdin, one JSON object per line (lines of any length:
 * lse sends a million numbers on one), answers each on stdout as one JSON line, and
 * exits when stdin closes. Run it as the tool of a GradBench run:
 *
 *     ./gradbench run --eval './gradbench repo eval lse' --tool 'node /path/to/wengert/packages/bench/dist/gradbench/main.js'
 */
import { linesOf, serve } from "./protocol.js";
import { modules } from "./modules/index.js";

// stdout carries the protocol and nothing else: whatever a library would print goes to stderr.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

await serve(linesOf(process.stdin), (line) => process.stdout.write(`${line}\n`), modules);

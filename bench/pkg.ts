/**
 * The package as users run it: the built entry point (`npm run bench` builds first). Benchmarks import from
 * here, never from src/, so no transpiler's helpers are in what they time. Typed from the source, so that a
 * fresh clone typechecks before any build.
 */
import type * as Root from "../src/index";

const entry: string = "../dist/index.js";
const root = (await import(entry)) as typeof Root;

export const { createRepairer, repairToolCalls } = root;

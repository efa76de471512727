import { createRepairer } from "./pkg";
import { brokenHistory } from "./histories";
const r = createRepairer();
const h = brokenHistory(1000);
for (let i = 0; i < 300; i++) r.repair(h);
const t = performance.now(); for (let i = 0; i < 1000; i++) r.repair(h); console.log("broken 1000 µs", ((performance.now() - t)).toFixed(1));

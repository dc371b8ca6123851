import { KEY } from "./a.js";
export * from "./a.js";

export function load() { return JSON.parse(localStorage.getItem(KEY) || "[]"); }
export function save(t) { localStorage.setItem(KEY, JSON.stringify(t)); }
export const again = () => import("./b.js");

import { save, load } from "./b.js";
import "./a.js?again";
export const KEY = "todos";
const todos = load();
save(todos);

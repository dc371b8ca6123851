import { load, save } from "./store/index.js";
import "./side.js";

const todos = load();
document.getElementById("new").addEventListener("change", (e) => {
  todos.push(e.target.value);
  save(todos);
});
// The canvas code is loaded only when needed.
const later = () => import(`./lazy.js`);
later();

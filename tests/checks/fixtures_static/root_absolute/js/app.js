import { loadTodos, saveTodos } from "/js/lib/store.js";

const todos = loadTodos();
document.getElementById("list").addEventListener("click", () => saveTodos(todos));

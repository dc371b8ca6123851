export function loadTodos() {
  return JSON.parse(localStorage.getItem("todos") || "[]");
}

export function saveTodos(todos) {
  localStorage.setItem("todos", JSON.stringify(todos));
}

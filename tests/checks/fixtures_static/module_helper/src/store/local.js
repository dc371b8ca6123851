const KEY = "todos";

export function load() {
  return JSON.parse(localStorage.getItem(KEY) || "[]");
}

export function save(todos) {
  localStorage.setItem(KEY, JSON.stringify(todos));
}

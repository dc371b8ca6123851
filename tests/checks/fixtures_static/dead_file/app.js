// The page keeps its list in memory only.
const todos = [];
function add(text) { todos.push(text); }

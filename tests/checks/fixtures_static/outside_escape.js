// Outside every artefact folder: no page may make claims from it.
localStorage.setItem("todos", "[]");
const saved = localStorage.getItem("todos");

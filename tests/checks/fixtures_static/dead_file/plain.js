// A file the page does not run: its storage code is no claim the page makes.
localStorage.setItem("todos", JSON.stringify([]));
const saved = JSON.parse(localStorage.getItem("todos"));
window.addEventListener("resize", () => {});

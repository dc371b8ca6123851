window.addEventListener("resize", () => document.body.classList.toggle("narrow", innerWidth < 500));

// Theme: "auto" follows prefers-color-scheme; the header switch cycles auto -> dark -> light
// and remembers the choice in localStorage. Sets <html data-theme="light|dark"> (the theme in
// effect) and data-theme-choice; fires "console:themechange" so charts can follow.
(function () {
  var KEY = "console-theme";
  var media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function choice() {
    try { return localStorage.getItem(KEY) || "auto"; } catch (e) { return "auto"; }
  }
  function apply() {
    var chosen = choice();
    var dark = chosen === "dark" || (chosen === "auto" && media && media.matches);
    var root = document.documentElement;
    root.dataset.theme = dark ? "dark" : "light";
    root.dataset.themeChoice = chosen;
    var button = document.getElementById("theme-switch");
    if (button) button.textContent = "Theme: " + chosen;
    document.dispatchEvent(new CustomEvent("console:themechange", {detail: {theme: root.dataset.theme}}));
  }
  apply();
  if (media && media.addEventListener) media.addEventListener("change", apply);
  document.addEventListener("DOMContentLoaded", function () {
    apply();
    var button = document.getElementById("theme-switch");
    if (!button) return;
    button.addEventListener("click", function () {
      var next = {auto: "dark", dark: "light", light: "auto"}[choice()] || "auto";
      try { localStorage.setItem(KEY, next); } catch (e) { /* private mode: not remembered */ }
      apply();
    });
  });
})();

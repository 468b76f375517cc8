// Delete a group or its offsets: the button stays disabled until the typed id matches
// data-confirm (the server checks too). The id is compared as text, never inserted as HTML.
(function () {
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    var input = form.querySelector("input[name=confirmation]");
    var button = form.querySelector("button[type=submit]");
    if (!input || !button) return;
    function sync() { button.disabled = input.value !== form.dataset.confirm; }
    input.addEventListener("input", sync);
    sync();
  });
})();

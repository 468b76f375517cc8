// Delete a group or its offsets: the typed id is the one confirmation. The button stays
// disabled until the typed id matches data-confirm-typed (the server checks too); no native
// confirm() asks again. The id is compared as text, never inserted as HTML.
(function () {
  document.querySelectorAll("form[data-confirm-typed]").forEach(function (form) {
    var input = form.querySelector("input[name=confirmation]");
    var button = form.querySelector("button[type=submit]");
    if (!input || !button) return;
    function sync() { button.disabled = input.value !== form.dataset.confirmTyped; }
    input.addEventListener("input", sync);
    sync();
  });
})();

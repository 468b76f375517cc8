// Delete a share group or its offsets: the button stays disabled until the typed id matches
// data-group-id (the server checks too). The id is compared as text, never inserted as HTML.
(function () {
  document.querySelectorAll("form[data-group-id]").forEach(function (form) {
    var input = form.querySelector("input[name=confirmation]");
    var button = form.querySelector("button[type=submit]");
    if (!input || !button) return;
    function sync() { button.disabled = input.value !== form.dataset.groupId; }
    input.addEventListener("input", sync);
    sync();
  });
})();

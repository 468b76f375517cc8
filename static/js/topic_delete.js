// Delete topic / delete records: the button stays disabled until the typed name matches (the server checks too).
(function () {
  ["delete-topic", "delete-records"].forEach(function (id) {
    var form = document.getElementById(id);
    if (!form) return;
    var input = form.querySelector("input[name=confirmation]");
    var button = form.querySelector("button[type=submit]");
    function sync() { button.disabled = input.value.trim() !== form.dataset.topic; }
    input.addEventListener("input", sync);
    sync();
  });
})();

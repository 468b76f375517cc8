// Delete topic: the button stays disabled until the typed name matches (the server checks too).
(function () {
  var form = document.getElementById("delete-topic");
  if (!form) return;
  var input = form.querySelector("input[name=confirmation]");
  var button = form.querySelector("button[type=submit]");
  function sync() { button.disabled = input.value.trim() !== form.dataset.topic; }
  input.addEventListener("input", sync);
  sync();
})();

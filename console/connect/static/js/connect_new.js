// New connector: choosing a plugin opens its form at once (the Choose button does the same
// without JavaScript).
(function () {
  "use strict";
  var select = document.getElementById("plugin");
  if (select) {
    select.addEventListener("change", function () {
      if (select.value) { select.form.submit(); }
    });
  }
})();

// Forms with data-confirm="message" ask before they post; the server refuses an unconfirmed
// POST with a confirmation page of its own (console/web.py unless_confirmed), so this only
// saves a round trip. Loaded by base.html on every page.
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (!form.dataset || !form.dataset.confirm) return;
  if (!window.confirm(form.dataset.confirm)) {
    event.preventDefault();
    return;
  }
  var field = form.querySelector("input[name=confirmed]");
  if (field) field.value = "yes";
});

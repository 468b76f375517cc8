// Topics list: re-filter as soon as the status or the internal-topics toggle changes.
document.querySelectorAll("#topic-filters select, #topic-filters input[type=checkbox]").forEach(function (el) {
  el.addEventListener("change", function () { el.form.submit(); });
});

// Groups list: re-filter as soon as the state or the sort order changes.
document.querySelectorAll("#group-filters select").forEach(function (el) {
  el.addEventListener("change", function () { el.form.submit(); });
});

// Every table.data sorts by a click on its column header (again: the other way), also the
// tables a live fragment brings. Numbers sort as numbers, formatted ones by what they stand for
// ("1.9 MiB", "1 h 30 min", "51,234", "unlimited": units.js's sortKey), dashes last; a cell's
// data-sort attribute, when present, is the value sorted on.
(function () {
  function key(cell) {
    var raw = (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent).trim();
    var formatted = window.consoleUnits ? window.consoleUnits.sortKey(raw) : null;
    if (formatted !== null) return {n: formatted};
    var number = raw.replace(/,/g, "").match(/^-?\d+(\.\d+)?/);
    if (number && number[0] === raw.replace(/,/g, "").split(" ")[0]) return {n: parseFloat(number[0])};
    return {s: raw.toLowerCase(), empty: raw === "" || raw === "—"};
  }
  function compare(a, b) {
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    if (a.n !== undefined) return -1;
    if (b.n !== undefined) return 1;
    if (a.empty !== b.empty) return a.empty ? 1 : -1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }
  function sortBy(table, header, index) {
    var body = table.tBodies[0];
    if (!body) return;
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.filter.call(body.rows, function (row) { return row.cells.length > index; });
    var keyed = rows.map(function (row, i) { return {row: row, key: key(row.cells[index]), i: i}; });
    keyed.sort(function (x, y) { return (ascending ? 1 : -1) * compare(x.key, y.key) || x.i - y.i; });
    keyed.forEach(function (k) { body.appendChild(k.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  function enhance(root) {
    root.querySelectorAll("table.data").forEach(enhanceTable);
  }
  function enhanceTable(table) {
    if (!table.tHead || !table.tHead.rows.length || table.dataset.sortable) return;
    table.dataset.sortable = "true";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      if (!header.textContent.trim()) return;
      header.classList.add("sortable");
      header.tabIndex = 0;
      header.addEventListener("click", function () { sortBy(table, header, index); });
      header.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, header, index); }
      });
    });
  }
  // Filters over a table's rows, all applied together: <input data-filter-table="id"> keeps the
  // rows of table#id whose text holds every word typed (case-insensitive); <select
  // data-filter-table="id" data-filter-attr="kind"> keeps those whose data-kind lists the chosen
  // word; <small data-filter-count="id"> says how many are shown.
  function filterRows(tableId) {
    var table = document.getElementById(tableId);
    if (!table || !table.tBodies[0]) return;
    var controls = document.querySelectorAll('[data-filter-table="' + tableId + '"]');
    var words = [], attrs = [];
    controls.forEach(function (c) {
      if (c.dataset.filterAttr) { if (c.value) attrs.push([c.dataset.filterAttr, c.value]); }
      else words = words.concat(c.value.toLowerCase().split(/\s+/).filter(Boolean));
    });
    var rows = table.tBodies[0].rows, shown = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var text = row.textContent.toLowerCase();
      var match = words.every(function (w) { return text.indexOf(w) !== -1; }) &&
        attrs.every(function (a) { return (" " + (row.dataset[a[0]] || "") + " ").indexOf(" " + a[1] + " ") !== -1; });
      row.hidden = !match;
      if (match) shown += 1;
    });
    var count = document.querySelector('[data-filter-count="' + tableId + '"]');
    if (count) count.textContent = words.length || attrs.length ? shown + " of " + rows.length + " shown" : "";
  }
  document.querySelectorAll("[data-filter-table]").forEach(function (control) {
    var run = function () { filterRows(control.dataset.filterTable); };
    control.addEventListener(control.tagName === "SELECT" ? "change" : "input", run);
    if (control.value) run();
  });
  // A filter form is never sent: Enter in its search box filters in place.
  document.querySelectorAll("form[role=search]").forEach(function (form) {
    form.addEventListener("submit", function (e) { e.preventDefault(); });
  });
  enhance(document);
  // Live fragments (live.js) replace their content: their new tables sort too.
  document.addEventListener("live:updated", function (event) { enhance(event.target); });
})();

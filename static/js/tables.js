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
  enhance(document);
  // Live fragments (live.js) replace their content: their new tables sort too.
  document.addEventListener("live:updated", function (event) { enhance(event.target); });
})();

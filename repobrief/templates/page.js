// Sortable tables and print preparation; no external code, works from file://.
(function () {
  "use strict";
  function cellValue(row, col) {
    var cell = row.cells[col];
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }
  function sortBy(table, col, th) {
    var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
    var numeric = th.getAttribute("data-type") === "number";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, col), y = cellValue(b, col);
      var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return dir === "ascending" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var button = th.querySelector("button");
      if (button) button.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
  // Collapsed sections would be left out of a printout.
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  });
})();

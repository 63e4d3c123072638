// Progressive enhancement only: sortable tables and open details when printing.
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) {
      var numeric = cell.classList.contains("num");
      return { n: NaN, s: numeric ? "" : cell.textContent.trim().toLowerCase() };
    }
    var n = Number(v);
    return { n: n, s: v.toLowerCase() };
  }
  function compare(a, b) {
    var an = !isNaN(a.n), bn = !isNaN(b.n);
    if (an && bn) { return a.n === b.n ? 0 : (a.n < b.n ? -1 : 1); }
    if (an !== bn) { return an ? -1 : 1; }
    return a.s < b.s ? -1 : (a.s > b.s ? 1 : 0);
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir);
    var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {
      return { r: r, k: key(r.cells[col]), i: i };
    });
    rows.sort(function (x, y) {
      var xn = !isNaN(x.k.n), yn = !isNaN(y.k.n);
      if (xn !== yn && (x.k.s === "" || y.k.s === "")) { return xn ? -1 : 1; }  // blanks last
      var c = compare(x.k, y.k);
      return (dir === "ascending" ? c : -c) || x.i - y.i;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (x) { frag.appendChild(x.r); });
    body.appendChild(frag);
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = th.textContent;
      b.title = "sort by " + th.textContent;
      th.textContent = "";
      th.appendChild(b);
      b.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.setAttribute("open", "");
    });
  });
})();

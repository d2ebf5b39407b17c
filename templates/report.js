// kernelscope report: progressive enhancement only; every table and chart reads fine without JavaScript.
(function () {
  "use strict";
  // Filter box above each kernel table: hide rows whose text does not contain the query.
  document.querySelectorAll("input.filter[data-table]").forEach(function (box) {
    var table = document.getElementById(box.getAttribute("data-table"));
    if (!table) { return; }
    box.addEventListener("input", function () {
      var q = box.value.toLowerCase();
      table.querySelectorAll("tbody tr").forEach(function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  });
  // The run's result.json travels inside the report (a JSON script, never executed): offer it as a download
  // so a reviewer can re-render or compare without the run folder.
  var data = document.getElementById("kernelscope-result");
  var button = document.getElementById("download");
  if (data && button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var blob = new Blob([data.textContent], { type: "application/json" });
      var a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = "result.json";
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
    });
  }
})();

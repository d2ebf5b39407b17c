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
  // The run's result.json travels inside the report (a JSON script, never executed; gzip + base64, so a large
  // model's result stays small): offer it as a download, so a reviewer can re-render or compare without the
  // run folder. Browsers without DecompressionStream keep the button hidden.
  var data = document.getElementById("kernelscope-result");
  var button = document.getElementById("download");
  if (data && button && typeof DecompressionStream === "function") {
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = atob(JSON.parse(data.textContent));
      var bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
      var json = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      new Response(json).blob().then(function (blob) {
        var a = document.createElement("a");
        a.href = URL.createObjectURL(new Blob([blob], { type: "application/json" }));
        a.download = "result.json";
        a.click();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
      });
    });
  }
  // A link to a collapsed block (a GEMM's autotune table) opens it.
  function openTarget() {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();

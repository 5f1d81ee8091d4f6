// Small progressive enhancements; every page works without them.
"use strict";
document.addEventListener("submit", function (ev) {
  var msg = ev.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) { ev.preventDefault(); }
});
document.addEventListener("click", function (ev) {
  var t = ev.target;
  if (t.matches("button.copy")) {
    var el = document.getElementById(t.getAttribute("data-copy"));
    if (el && navigator.clipboard) {
      navigator.clipboard.writeText(el.textContent).then(function () { t.textContent = "已复制"; });
    }
  }
  if (t.matches("input.select-all")) {
    t.closest("form").querySelectorAll("input[name=task_ids]").forEach(function (b) { b.checked = t.checked; });
  }
});

// ipywidgets 8 typesets labels with MathJax 2's MathJax.Hub.Queue, which MathJax 3 lacks
// ("Cannot read properties of undefined (reading 'Queue')"). Loaded deferred, so it runs
// after the MathJax 3 script has replaced window.MathJax; it maps the one call widgets make.
(function () {
  if (!window.MathJax || window.MathJax.Hub || !window.MathJax.startup) return;
  window.MathJax.Hub = {
    Queue: function (args) {
      var element = args && args[2];
      window.MathJax.startup.promise.then(function () {
        return element ? window.MathJax.typesetPromise([element]) : null;
      });
    },
  };
})();

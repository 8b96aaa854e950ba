// Loaded after require.js and before embed-amd.js (see nb_ipywidgets_js in _config.yml).
// embed-amd.js and the widget modules bundled in it (@jupyter-widgets/base, controls, output)
// each compute their webpack public path from their require.js module id, so their fonts
// would be fetched from <page folder>/@jupyter-widgets/… and 404. Point those module paths
// at the folder this file is served from (_static/ipywidgets/, where the fonts are), which
// works at every page depth.
(function () {
  var src = document.currentScript.src.split(/[?#]/)[0];
  var base = src.substring(0, src.lastIndexOf("/"));
  require.config({
    paths: {
      "@jupyter-widgets/html-manager/dist": base,
      "@jupyter-widgets/base": base + "/base",
      "@jupyter-widgets/controls": base + "/controls",
      "@jupyter-widgets/output": base + "/output",
    },
  });
})();

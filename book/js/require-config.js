// Loaded after require.js and before embed-amd.js (see nb_ipywidgets_js in _config.yml).
// embed-amd.js computes its webpack public path from its require.js module id, so its
// fonts would be fetched from /@jupyter-widgets/html-manager/dist/… and 404. Point that
// module path at the folder this file is served from (_static/ipywidgets/), which works
// at every page depth.
(function () {
  var src = document.currentScript.src.split(/[?#]/)[0];
  var base = src.substring(0, src.lastIndexOf("/"));
  require.config({ paths: { "@jupyter-widgets/html-manager/dist": base } });
})();

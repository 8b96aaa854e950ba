/* The static site's widget player (torchcourse, MIT).
 *
 * Each widget on a page is a <div class="tc-player"> holding its starting frame and message
 * and, in <script class="tc-player-data">, every frame its Python wrapper computed at build
 * time (torchcourse.widgets.Explorer.frames). This script builds the widget's controls from
 * that data and swaps the frame and message when one moves: no kernel, nothing fetched.
 *
 * data (torchcourse.frames.FrameData; tests/unit/test_frames.py holds the keys read here to it) =
 *        {title, axes: [{name, description, kind, labels, start, note}], images: [base64 PNG],
 *         messages: [HTML], frames: [[value index per axis..., image index, message index]],
 *         start: index of the starting frame}
 * A widget may declare only some combinations of values. A move changes one control and never
 * another: each control offers only the values that have a frame beside the other controls as they
 * stand (like the live widget, which bounds a slider by what its other controls allow). A slider's
 * range spans those values and skips, in the direction it was moved, any between them without a
 * frame; a list greys out the others; a control with one such value is disabled. Which combinations
 * exist is said under the player (torchcourse.frames.player_html), and tests/site/test_frame_spaces.py
 * holds every widget's frames to being reachable this way, one control per move.
 */
(function () {
  "use strict";

  // The player's own words, in the page's language (the Chinese site is <html lang="zh-CN">).
  var WORDS = /^zh\b/i.test(document.documentElement.lang || "")
    ? {reset: "重置", resetTitle: "回到 notebook 开始时的设置", widget: "控件"}
    : {reset: "reset", resetTitle: "back to the settings the notebook starts with", widget: "widget"};

  function setup(player) {
    var data = JSON.parse(player.querySelector("script.tc-player-data").textContent);
    var axes = data.axes;
    var img = player.querySelector("img.tc-player-frame");
    var message = player.querySelector(".tc-player-message");
    var row = player.querySelector(".tc-player-controls");
    var byKey = {};
    data.frames.forEach(function (f) { byKey[f.slice(0, axes.length).join(",")] = f; });
    var urls = [];
    var current = data.frames[data.start].slice(0, axes.length);
    var inputs = [];

    function url(i) {
      if (!urls[i]) urls[i] = "data:image/png;base64," + data.images[i];
      return urls[i];
    }

    function show(frame) {
      current = frame.slice(0, axes.length);
      var image = frame[axes.length], text = frame[axes.length + 1];
      img.src = url(image);
      img.alt = (data.title || WORDS.widget) + ": " + axes.map(function (a, k) {
        return a.description + " " + a.labels[current[k]];
      }).join(", ");
      message.innerHTML = data.messages[text];
      player.dataset.state = current.join(",");
      player.dataset.image = String(image);
      player.dataset.message = String(text);
      inputs.forEach(function (input, k) { input.set(current[k], available(k)); });
    }

    function available(axis) {
      // The values of one control that have a frame with every other control as it is now.
      var found = {}, k;
      data.frames.forEach(function (f) {
        for (k = 0; k < axes.length; k++) if (k !== axis && f[k] !== current[k]) return;
        found[f[axis]] = true;
      });
      return found;
    }

    function change(axis, value) {
      var wanted = current.slice(), ok = available(axis), direction = value - current[axis], step;
      if (!ok[value] && axes[axis].kind === "slider" && direction !== 0) {
        // Between two values that have frames: go on to the next one in the direction of the move.
        step = direction > 0 ? 1 : -1;
        while (value >= 0 && value < axes[axis].labels.length && !ok[value]) value += step;
      }
      wanted[axis] = value;
      show(byKey[wanted.join(",")] || byKey[current.join(",")]);
    }

    axes.forEach(function (a, k) {
      var label = document.createElement("label");
      label.className = "tc-player-control tc-player-" + a.kind;
      var name = document.createElement("span");
      name.className = "tc-player-description";
      name.textContent = a.description;
      label.appendChild(name);
      var input;
      if (a.kind === "checkbox") {
        var box = document.createElement("input");
        box.type = "checkbox";
        box.dataset.axis = a.name;
        var on = a.labels.indexOf("True");
        box.addEventListener("change", function () { change(k, box.checked ? on : 1 - on); });
        label.appendChild(box);
        input = { set: function (i, ok) { box.checked = i === on; box.disabled = !ok[1 - i]; } };
      } else if (a.kind === "slider") {
        var range = document.createElement("input");
        range.type = "range";
        range.min = "0";
        range.max = String(a.labels.length - 1);
        range.step = "1";
        range.dataset.axis = a.name;
        var readout = document.createElement("span");
        readout.className = "tc-player-readout";
        range.addEventListener("input", function () { change(k, Number(range.value)); });
        label.appendChild(range);
        label.appendChild(readout);
        input = {
          set: function (i, ok) {
            var reach = Object.keys(ok).map(Number);
            range.min = String(Math.min.apply(null, reach));
            range.max = String(Math.max.apply(null, reach));
            range.disabled = reach.length < 2;
            range.value = String(i);
            // Announced as the value it stands for (512), not its position on the slider (6).
            range.setAttribute("aria-valuetext", a.labels[i]);
            readout.textContent = a.labels[i];
          }
        };
      } else {
        var select = document.createElement("select");
        select.dataset.axis = a.name;
        a.labels.forEach(function (text, i) {
          var option = document.createElement("option");
          option.value = String(i);
          option.textContent = text;
          select.appendChild(option);
        });
        select.addEventListener("change", function () { change(k, Number(select.value)); });
        label.appendChild(select);
        input = {
          set: function (i, ok) {
            Array.prototype.forEach.call(select.options, function (option, j) { option.disabled = !ok[j]; });
            select.disabled = Object.keys(ok).length < 2;
            select.value = String(i);
          }
        };
      }
      if (a.note) {
        var note = document.createElement("span");
        note.className = "tc-player-note";
        note.textContent = "(" + a.note + ")";
        label.appendChild(note);
      }
      row.appendChild(label);
      inputs.push(input);
    });
    var reset = document.createElement("button");
    reset.type = "button";
    reset.className = "tc-player-reset";
    reset.textContent = WORDS.reset;
    reset.title = WORDS.resetTitle;
    reset.addEventListener("click", function () { show(data.frames[data.start]); });
    row.appendChild(reset);
    show(data.frames[data.start]);
    player.classList.add("tc-player-ready");
  }

  // The player's few styles live here with it (one file to vendor); the page theme does the rest.
  var STYLE = ".tc-player{margin:.5em 0}.tc-player-controls{display:flex;flex-wrap:wrap;gap:.3em 1.2em;" +
    "margin:.3em 0}.tc-player-control{display:inline-flex;align-items:center;gap:.4em}" +
    ".tc-player-readout{min-width:3em;font-variant-numeric:tabular-nums}.tc-player-note{font-size:.85em}" +
    ".tc-player-frame{max-width:100%;height:auto;display:block}";

  function setupAll() {
    if (!document.getElementById("tc-player-style")) {
      var style = document.createElement("style");
      style.id = "tc-player-style";
      style.textContent = STYLE;
      document.head.appendChild(style);
    }
    document.querySelectorAll("div.tc-player:not(.tc-player-ready)").forEach(setup);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setupAll);
  } else {
    setupAll();
  }
})();

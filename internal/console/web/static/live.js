// live.js keeps a console page current over the project's event stream (/api/v1/events).
// The page works without it: every form posts and every list renders on the server. When
// an event of one of the page's types (body[data-live], comma-separated) arrives,
// the page is fetched again and merged in place: a [data-live-list] keeps the children
// whose id it still has (so a reason being typed survives), drops the ones gone and adds
// the new ones; a [data-live-text] element takes its new text.
"use strict";
(function () {
  var body = document.body;
  var types = (body.dataset.live || "").split(",").filter(Boolean);
  var project = body.dataset.project;
  if (!types.length || !project || !window.EventSource) {
    return;
  }
  var status = document.getElementById("live-status");
  var pending = false;
  var running = false;

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function merge(fresh) {
    document.querySelectorAll("[data-live-text][id]").forEach(function (el) {
      var next = fresh.getElementById(el.id);
      if (next) {
        el.textContent = next.textContent;
        el.className = next.className;
        if (next.hasAttribute("aria-label")) {
          el.setAttribute("aria-label", next.getAttribute("aria-label"));
        }
      }
    });
    var added = 0;
    document.querySelectorAll("[data-live-list][id]").forEach(function (list) {
      var next = fresh.getElementById(list.id);
      if (!next) {
        return;
      }
      var keep = {};
      Array.prototype.forEach.call(next.children, function (c) {
        if (c.id) {
          keep[c.id] = true;
        }
      });
      Array.prototype.slice.call(list.children).forEach(function (c) {
        if (!c.id || !keep[c.id]) {
          list.removeChild(c);
        }
      });
      var before = null;
      Array.prototype.slice.call(next.children).reverse().forEach(function (c) {
        var have = c.id ? document.getElementById(c.id) : null;
        if (have && have.parentNode === list) {
          before = have;
          return;
        }
        var node = document.importNode(c, true);
        list.insertBefore(node, before);
        before = node;
        added++;
      });
    });
    if (added) {
      say(added === 1 ? "1 new item on this page." : added + " new items on this page.");
    }
  }

  function refresh() {
    if (running) {
      pending = true;
      return;
    }
    running = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("status " + resp.status);
        }
        return resp.text();
      })
      .then(function (html) {
        merge(new DOMParser().parseFromString(html, "text/html"));
      })
      .catch(function () {
        say("This page could not be brought up to date; reload it.");
      })
      .finally(function () {
        running = false;
        if (pending) {
          pending = false;
          refresh();
        }
      });
  }

  var url = "/api/v1/events?project=" + encodeURIComponent(project) + "&after=" + encodeURIComponent(body.dataset.after || "0");
  var stream = new EventSource(url, { withCredentials: true });
  // Every event carries its type as the SSE event name; listen to the page's.
  types.forEach(function (type) {
    stream.addEventListener(type, refresh);
  });
  stream.onerror = function () {
    if (stream.readyState === EventSource.CLOSED) {
      say("Live updates stopped; reload the page.");
    }
  };
})();

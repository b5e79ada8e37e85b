// The report page: reads the inlined payload (see src/report/payload.ts for its layout),
// draws six Chart.js charts and redraws them when a filter changes. Plain browser
// JavaScript, no network. window.__report lets a test read what each chart drew.
(function () {
  'use strict';
  var P = JSON.parse(document.getElementById('report-data').textContent);
  var state = { pipeline: -1, location: -1, domain: -1, rank: -1 };
  var charts = {};
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  var STRONG = ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bf8700', '#0a7ea4', '#cf222e', '#116329'];
  var SOFT = ['#e16f24', '#9a6700', '#6e7781', '#a475f9', '#2da44e', '#57606a', '#d4a72c', '#4d2d00'];
  var CATEGORY = [
    '#1f6feb',
    '#e16f24',
    '#1a7f37',
    '#d1242f',
    '#8250df',
    '#bf8700',
    '#0a7ea4',
    '#cf5a99',
    '#57606a',
    '#2da44e',
    '#9a6700',
    '#6639ba',
  ];

  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = '#3d4650';
  Chart.defaults.plugins.legend.labels.boxWidth = 14;
  Chart.defaults.plugins.legend.labels.boxHeight = 2;

  // A category axis of dates: a dozen unrotated labels at most, however long the window.
  var DATE_AXIS = { ticks: { maxTicksLimit: 12, maxRotation: 0, autoSkip: true } };

  function $(id) {
    return document.getElementById(id);
  }
  function has(list, x) {
    return list.indexOf(x) >= 0;
  }
  function fmt(n, digits) {
    return n === null || n === undefined || isNaN(n) ? '–' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits || 0 });
  }
  function locName(l) {
    var x = P.locations[l];
    return x ? x.name : '?';
  }
  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + ((n >> 16) & 255) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }
  function setText(id, text) {
    $(id).textContent = text;
  }

  function locationsInScope() {
    var out = [];
    for (var l = 0; l < P.locations.length; l++) {
      if (state.location >= 0 && l !== state.location) continue;
      if (state.pipeline >= 0 && !has(P.pipelineLocations[state.pipeline] || [], l)) continue;
      out.push(l);
    }
    return out;
  }
  function trackedDomains() {
    var set = {};
    P.tracked.forEach(function (ds, p) {
      if (state.pipeline >= 0 && p !== state.pipeline) return;
      ds.forEach(function (d) {
        set[d] = true;
      });
    });
    return set;
  }
  function keywordPasses(k, ignoreLocation) {
    var kw = P.keywords;
    if (state.pipeline >= 0 && !has(kw.pipelines[k], state.pipeline)) return false;
    if (!ignoreLocation && state.location >= 0 && !has(kw.locations[k], state.location)) return false;
    if (state.domain >= 0 && !has(kw.domains[k], state.domain)) return false;
    return true;
  }

  function draw(id, config) {
    if (charts[id]) charts[id].destroy();
    var canvas = $('chart-' + id);
    var empty = !config.data.datasets.length;
    canvas.parentElement.classList.toggle('empty', empty);
    charts[id] = new Chart(canvas, config);
  }
  function section(id, present) {
    $('sec-' + id).hidden = !present;
    return present;
  }

  // ---- filters -------------------------------------------------------------------
  function option(select, value, label) {
    var o = document.createElement('option');
    o.value = String(value);
    o.textContent = label;
    select.appendChild(o);
  }
  function fillFilters() {
    var fp = $('f-pipeline'),
      fl = $('f-location'),
      fd = $('f-domain');
    option(fp, -1, 'All pipelines');
    P.pipelines.forEach(function (p, i) {
      option(fp, i, p);
    });
    option(fl, -1, 'All locations');
    P.locations.forEach(function (l, i) {
      option(fl, i, l.name + ' (' + l.code + ')');
    });
    option(fd, -1, 'All domains');
    var tracked = trackedDomains();
    var ids = P.domains.map(function (_, i) {
      return i;
    });
    ids.sort(function (a, b) {
      return (tracked[b] ? 1 : 0) - (tracked[a] ? 1 : 0) || P.domains[a].localeCompare(P.domains[b]);
    });
    ids.forEach(function (i) {
      option(fd, i, P.domains[i] + (tracked[i] ? ' (tracked)' : ''));
    });
    [
      ['pipeline', fp],
      ['location', fl],
      ['domain', fd],
    ].forEach(function (f) {
      f[1].addEventListener('change', function () {
        state[f[0]] = Number(f[1].value);
        renderAll();
      });
    });
    $('rank-keyword').addEventListener('change', function (e) {
      state.rank = Number(e.target.value);
      renderRank();
    });
  }

  // ---- rank history ----------------------------------------------------------------
  function rankOptions() {
    return P.rank.series
      .map(function (s, i) {
        return i;
      })
      .filter(function (i) {
        var s = P.rank.series[i];
        if (state.pipeline >= 0 && !has(s.p, state.pipeline)) return false;
        if (state.location >= 0 && s.l !== state.location) return false;
        if (
          state.domain >= 0 &&
          !s.lines.some(function (ln) {
            return ln[0] === state.domain;
          })
        )
          return false;
        return true;
      });
  }
  function rankLabel(s) {
    return P.keywords.names[s.k] + ' — ' + locName(s.l) + (s.m ? ' · ' + s.m : '');
  }
  function renderRank() {
    if (!section('rank', !!P.rank)) return;
    var sel = $('rank-keyword');
    var ids = rankOptions();
    if (!has(ids, state.rank)) state.rank = ids.length ? ids[0] : -1;
    sel.innerHTML = '';
    ids.forEach(function (i) {
      option(sel, i, rankLabel(P.rank.series[i]));
    });
    sel.value = String(state.rank);
    var s = P.rank.series[state.rank];
    var datasets = [];
    var strong = 0,
      soft = 0;
    if (s) {
      s.lines.forEach(function (ln) {
        var tracked = ln[1] === 1,
          focus = state.domain >= 0 && ln[0] === state.domain;
        var color = tracked ? STRONG[strong++ % STRONG.length] : SOFT[soft++ % SOFT.length];
        var faded = state.domain >= 0 && !focus;
        datasets.push({
          label: P.domains[ln[0]] + (tracked ? ' (tracked)' : ''),
          data: ln[2],
          borderColor: faded ? alpha(color, 0.35) : color,
          backgroundColor: faded ? alpha(color, 0.35) : color,
          borderWidth: focus ? 4 : tracked ? 2.5 : 1.5,
          borderDash: tracked ? [] : [6, 4],
          pointRadius: P.rank.dates.length > 40 ? 0 : 3,
          spanGaps: false,
          tension: 0.15,
        });
      });
    }
    draw('rank', {
      type: 'line',
      data: { labels: P.rank.dates, datasets: datasets },
      options: {
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: DATE_AXIS,
          y: {
            reverse: true,
            min: 1,
            suggestedMax: 20,
            title: { display: true, text: 'absolute rank (1 = top)' },
            ticks: { precision: 0 },
          },
        },
        plugins: {
          legend: { position: 'right' },
          tooltip: {
            callbacks: {
              label: function (c) {
                return c.dataset.label + ': #' + c.parsed.y;
              },
            },
          },
        },
      },
    });
    setText(
      'rank-sub',
      ids.length +
        ' keyword series (top ' +
        P.rank.keywordsShown +
        ' of ' +
        P.rank.keywordsTotal +
        ' keywords by search volume). ' +
        'Solid: tracked domains; dashed: the closest competitors. Gaps: not ranked on that check. Tracked domains: ' +
        P.trackedSource +
        '.',
    );
  }

  // ---- visibility -------------------------------------------------------------------
  function renderVisibility() {
    if (!section('visibility', !!P.visibility)) return;
    var V = P.visibility,
      locs = locationsInScope(),
      tracked = trackedDomains();
    var denom = V.dates.map(function (_, i) {
      return locs.reduce(function (t, l) {
        return t + ((V.checked[l] || [])[i] || 0);
      }, 0);
    });
    var byDomain = {},
      order = [];
    V.series.forEach(function (s) {
      if (!has(locs, s[1])) return;
      if (state.domain >= 0 && s[0] !== state.domain) return;
      if (!byDomain[s[0]]) {
        byDomain[s[0]] = V.dates.map(function () {
          return 0;
        });
        order.push(s[0]);
      }
      s[2].forEach(function (v, i) {
        byDomain[s[0]][i] += v;
      });
    });
    var strong = 0,
      soft = 0;
    var datasets = order.map(function (d) {
      var isTracked = !!tracked[d];
      var color = isTracked ? STRONG[strong++ % STRONG.length] : SOFT[soft++ % SOFT.length];
      return {
        label: P.domains[d] + (isTracked ? ' (tracked)' : ''),
        data: byDomain[d].map(function (w, i) {
          return denom[i] ? Math.round((10000 * w) / denom[i]) / 100 : null;
        }),
        borderColor: color,
        backgroundColor: color,
        borderWidth: isTracked ? 2.5 : 1.5,
        borderDash: isTracked ? [] : [6, 4],
        pointRadius: V.dates.length > 40 ? 0 : 3,
        tension: 0.15,
      };
    });
    draw('visibility', {
      type: 'line',
      data: { labels: V.dates, datasets: datasets },
      options: {
        scales: { x: DATE_AXIS, y: { min: 0, title: { display: true, text: 'visibility %' } } },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: {
            callbacks: {
              label: function (c) {
                return c.dataset.label + ': ' + c.parsed.y + ' %';
              },
            },
          },
        },
      },
    });
    setText(
      'visibility-sub',
      'Click-through-weighted share of the best possible ranks, over ' +
        (locs.length === P.locations.length ? 'all locations' : locs.map(locName).join(', ')) +
        '. Tracked domains and the ' +
        (order.length -
          Object.keys(tracked).filter(function (d) {
            return byDomain[d];
          }).length) +
        ' others with the most visibility.',
    );
  }

  // ---- spend --------------------------------------------------------------------------
  function renderSpend() {
    if (!section('spend', !!P.spend)) return;
    var S = P.spend,
      totals = {},
      total = 0,
      calls = 0;
    var rows = S.rows.filter(function (r) {
      return state.pipeline < 0 || r[1] === state.pipeline;
    });
    rows.forEach(function (r) {
      totals[r[2]] = (totals[r[2]] || 0) + r[3];
      total += r[3];
      calls += r[4];
    });
    var endpoints = Object.keys(totals)
      .map(Number)
      .sort(function (a, b) {
        return totals[b] - totals[a] || a - b;
      });
    var shown = endpoints.length > 8 ? endpoints.slice(0, 7) : endpoints;
    var groups = shown.map(function (e) {
      return { label: S.endpoints[e], ids: [e] };
    });
    if (endpoints.length > shown.length)
      groups.push({ label: endpoints.length - shown.length + ' other endpoints', ids: endpoints.slice(shown.length) });
    var datasets = groups.map(function (g, gi) {
      var data = S.days.map(function () {
        return 0;
      });
      rows.forEach(function (r) {
        if (has(g.ids, r[2])) data[r[0]] += r[3];
      });
      var color = CATEGORY[gi % CATEGORY.length];
      return {
        label: g.label,
        data: data.map(function (v) {
          return Math.round(v * 10000) / 10000;
        }),
        backgroundColor: color,
        borderColor: color,
        stack: 'cny',
      };
    });
    draw('spend', {
      type: 'bar',
      data: { labels: S.days, datasets: datasets },
      options: {
        scales: { x: { stacked: true, ticks: DATE_AXIS.ticks }, y: { stacked: true, title: { display: true, text: 'CNY charged' } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    setText(
      'spend-sub',
      fmt(total, 4) +
        ' CNY charged by ' +
        calls +
        ' calls on ' +
        S.days.length +
        ' days' +
        (state.pipeline >= 0 ? ' (pipeline ' + P.pipelines[state.pipeline] + ')' : '') +
        '. Not split by location or domain.',
    );
  }

  // ---- search volume and seasonality --------------------------------------------------
  function volumeRows() {
    var locs = locationsInScope(),
      byKeyword = {},
      order = [];
    P.volume.series.forEach(function (s) {
      if (!has(locs, s[1]) || !keywordPasses(s[0], true)) return;
      if (!byKeyword[s[0]]) {
        byKeyword[s[0]] = P.volume.months.map(function () {
          return null;
        });
        order.push(s[0]);
      }
      s[2].forEach(function (v, i) {
        if (v !== null) byKeyword[s[0]][i] = (byKeyword[s[0]][i] || 0) + v;
      });
    });
    return { byKeyword: byKeyword, order: order, locs: locs };
  }
  function recentSum(values) {
    return values.slice(-12).reduce(function (t, v) {
      return t + (v || 0);
    }, 0);
  }
  function renderVolume() {
    var present = !!P.volume;
    section('volume', present);
    section('seasonality', present);
    if (!present) return;
    var M = P.volume.months,
      r = volumeRows();
    var total = M.map(function (_, i) {
      var t = null;
      r.order.forEach(function (k) {
        var v = r.byKeyword[k][i];
        if (v !== null) t = (t || 0) + v;
      });
      return t;
    });
    var top = r.order
      .slice()
      .sort(function (a, b) {
        return recentSum(r.byKeyword[b]) - recentSum(r.byKeyword[a]) || a - b;
      })
      .slice(0, 5);
    var datasets = [];
    if (r.order.length) {
      datasets.push({
        label: 'All ' + r.order.length + ' keywords',
        data: total,
        borderColor: '#24292f',
        backgroundColor: '#24292f',
        borderWidth: 3,
        pointRadius: 2,
        yAxisID: 'total',
      });
    }
    top.forEach(function (k, i) {
      datasets.push({
        label: P.keywords.names[k],
        data: r.byKeyword[k],
        borderColor: CATEGORY[i],
        backgroundColor: CATEGORY[i],
        borderWidth: 1.5,
        pointRadius: 0,
        tension: 0.2,
        yAxisID: 'y',
      });
    });
    draw('volume', {
      type: 'line',
      data: { labels: M, datasets: datasets },
      options: {
        scales: {
          x: DATE_AXIS,
          y: { position: 'left', min: 0, title: { display: true, text: 'top keywords' } },
          total: { position: 'right', min: 0, grid: { drawOnChartArea: false }, title: { display: true, text: 'all keywords' } },
        },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    setText(
      'volume-sub',
      'Monthly search volume, ' +
        M[0] +
        ' to ' +
        M[M.length - 1] +
        ': the sum of the ' +
        r.order.length +
        ' keywords in view (right axis) and the five largest (left axis).',
    );
    renderVolumeTable(r);
    renderSeasonality(total);
  }
  function renderVolumeTable(r) {
    var table = $('volume-table'),
      locs = r.locs;
    var rows = P.volume.series.filter(function (s) {
      return has(locs, s[1]) && keywordPasses(s[0], true);
    });
    rows.sort(function (a, b) {
      return recentSum(b[2]) - recentSum(a[2]);
    });
    var html =
      '<thead><tr><th>Keyword</th><th>Location</th><th class="n">Latest</th><th class="n">YoY</th><th class="n">Slope / mo</th><th>Peak</th></tr></thead><tbody>';
    rows.slice(0, 7).forEach(function (s) {
      var last = null;
      for (var i = s[2].length - 1; i >= 0 && last === null; i--) last = s[2][i];
      var yoy = s[5] === null ? '–' : (s[5] >= 0 ? '+' : '') + fmt(100 * s[5], 1) + ' %';
      html +=
        '<tr><td>' +
        escapeHtml(P.keywords.names[s[0]]) +
        '</td><td>' +
        escapeHtml(locName(s[1])) +
        '</td><td class="n">' +
        fmt(last) +
        '</td><td class="n">' +
        yoy +
        '</td><td class="n">' +
        fmt(s[4], 1) +
        '</td><td>' +
        MONTHS[s[3] - 1] +
        '</td></tr>';
    });
    table.innerHTML = html + '</tbody>';
  }
  function escapeHtml(t) {
    return String(t).replace(/[&<>"]/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
    });
  }
  function renderSeasonality(total) {
    var sums = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
      counts = sums.slice();
    P.volume.months.forEach(function (m, i) {
      if (total[i] === null) return;
      var cm = Number(m.slice(5, 7)) - 1;
      sums[cm] += total[i];
      counts[cm] += 1;
    });
    var means = sums.map(function (s, i) {
      return counts[i] ? s / counts[i] : null;
    });
    var known = means.filter(function (x) {
      return x !== null;
    });
    var avg =
      known.reduce(function (t, x) {
        return t + x;
      }, 0) / (known.length || 1);
    var index = means.map(function (x) {
      return x === null || !avg ? null : Math.round((100 * x) / avg) / 100;
    });
    var peak = index.indexOf(
      Math.max.apply(
        null,
        index.filter(function (x) {
          return x !== null;
        }),
      ),
    );
    draw('seasonality', {
      type: 'bar',
      data: {
        labels: MONTHS,
        datasets: known.length
          ? [
              {
                label: 'seasonality index (1 = an average month)',
                data: index,
                backgroundColor: index.map(function (_, i) {
                  return i === peak ? '#bf8700' : '#8fb8f7';
                }),
              },
            ]
          : [],
      },
      options: { scales: { y: { min: 0, title: { display: true, text: 'index' } } }, plugins: { legend: { display: false } } },
    });
    setText(
      'seasonality-sub',
      'Mean volume of each calendar month over the keywords in view, divided by the mean of the months' +
        (peak >= 0 ? '; peak: ' + MONTHS[peak] + ' (' + index[peak] + ').' : '.'),
    );
  }

  // ---- clusters -------------------------------------------------------------------------
  function renderClusters() {
    if (!section('clusters', !!P.clusters)) return;
    var C = P.clusters,
      groups = C.clusters.map(function () {
        return [];
      }),
      shown = 0;
    C.points.forEach(function (p) {
      if (!keywordPasses(p[0], false)) return;
      groups[p[3]].push({ x: p[1], y: p[2], k: p[0] });
      shown++;
    });
    var datasets = [];
    groups.forEach(function (pts, i) {
      if (!pts.length) return;
      var color = CATEGORY[i % CATEGORY.length];
      datasets.push({
        label: C.clusters[i].label + ' (' + pts.length + ')',
        clusterLabel: C.clusters[i].label,
        data: pts,
        backgroundColor: alpha(color, 0.75),
        borderColor: color,
        pointRadius: 4,
        pointHoverRadius: 6,
      });
    });
    draw('clusters', {
      type: 'scatter',
      data: { datasets: datasets },
      options: {
        scales: {
          x: { min: -1.1, max: 1.1, ticks: { display: false }, title: { display: true, text: 'first principal component' } },
          y: { min: -1.1, max: 1.1, ticks: { display: false }, title: { display: true, text: 'second principal component' } },
        },
        plugins: {
          legend: { position: 'bottom', labels: { usePointStyle: true, pointStyle: 'circle', boxWidth: 8, boxHeight: 8 } },
          tooltip: {
            callbacks: {
              label: function (c) {
                return P.keywords.names[c.raw.k] + ' — ' + c.dataset.clusterLabel;
              },
            },
          },
        },
      },
    });
    setText(
      'clusters-sub',
      shown +
        ' keywords in ' +
        datasets.length +
        ' clusters; embeddings (' +
        C.model +
        ', ' +
        C.dimensions +
        ' dimensions) projected on their first two principal components.',
    );
  }

  // ---- alerts ----------------------------------------------------------------------------
  function renderAlerts() {
    if (!section('alerts', !!P.alerts)) return;
    var rows = P.alerts.rows.filter(function (r) {
      return state.pipeline < 0 || r[1] === state.pipeline;
    });
    var pending = rows.filter(function (r) {
      return !r[4];
    }).length;
    var html = '<thead><tr><th>Date</th><th>Pipeline</th><th>Rule</th><th>Alert</th><th>Delivery</th></tr></thead><tbody>';
    rows.forEach(function (r) {
      var delivery = r[4] ? 'delivered' : 'pending' + (r[5] ? ' (' + r[5] + ' tries' + (r[6] ? ': ' + r[6] : '') + ')' : '');
      html +=
        '<tr><td>' +
        escapeHtml(r[0]) +
        '</td><td>' +
        escapeHtml(P.pipelines[r[1]]) +
        '</td><td>' +
        escapeHtml(r[2]) +
        '</td><td>' +
        escapeHtml(r[3]) +
        '</td><td>' +
        escapeHtml(delivery) +
        '</td></tr>';
    });
    $('alerts-table').innerHTML = html + '</tbody>';
    setText(
      'alerts-sub',
      rows.length +
        ' shown' +
        (P.alerts.total > P.alerts.rows.length ? ' of the ' + P.alerts.total + ' in the window (newest first)' : '') +
        (pending ? '; ' + pending + ' not delivered yet (sent again at the next run)' : ''),
    );
  }

  // ---- page ------------------------------------------------------------------------------
  function renderMeta() {
    var n = P.keywords.names.length,
      d = P.rank ? P.rank.dates : P.visibility ? P.visibility.dates : [];
    setText(
      'meta',
      'Generated ' +
        P.generatedAt.slice(0, 16).replace('T', ' ') +
        ' UTC · ' +
        P.pipelines.length +
        ' pipeline' +
        (P.pipelines.length === 1 ? '' : 's') +
        ' · ' +
        n +
        ' keywords · ' +
        P.locations.length +
        ' location' +
        (P.locations.length === 1 ? '' : 's') +
        (d.length ? ' · checks ' + d[0] + ' to ' + d[d.length - 1] : ''),
    );
    var ul = $('notes');
    P.notes.forEach(function (t) {
      var li = document.createElement('li');
      li.textContent = t;
      ul.appendChild(li);
    });
    ul.hidden = !P.notes.length;
  }
  function renderAll() {
    renderRank();
    renderVisibility();
    renderSpend();
    renderVolume();
    renderClusters();
    renderAlerts();
  }

  function summary() {
    var out = {};
    Object.keys(charts).forEach(function (id) {
      var c = Chart.getChart($('chart-' + id));
      if (!c || $('sec-' + id).hidden) return;
      out[id] = {
        type: c.config.type,
        labels: (c.data.labels || []).length,
        series: c.data.datasets.map(function (ds, i) {
          return {
            label: ds.label,
            points: ds.data.filter(function (v) {
              return v !== null && v !== undefined;
            }).length,
            drawn: c.getDatasetMeta(i).data.filter(function (el) {
              return !el.skip;
            }).length,
            data: ds.data,
          };
        }),
      };
    });
    return out;
  }

  fillFilters();
  renderMeta();
  renderAll();
  window.__report = {
    ready: true,
    state: state,
    charts: summary,
  };
})();

// The dashboard's one script (served as /static/dashboard.js): draws each chart with uPlot from the JSON beside it,
// and keeps the live table current from /api/live/stream. It writes text with textContent only, never HTML, so the
// untrusted strings it shows (labels, node names) cannot become markup. Drawn charts are listed in
// window.cablequalCharts (id, and points per series) for the browser tests and for anyone inspecting the page.
export const CLIENT_JS = String.raw`'use strict';
(function () {
  window.cablequalCharts = [];
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];

  function drawChart(script) {
    var spec = JSON.parse(script.textContent);
    var box = script.previousElementSibling;
    var series = [{ label: spec.xLabel }];
    spec.series.forEach(function (s, i) {
      var colour = palette[i % palette.length];
      var one = { label: s.label, stroke: colour, width: 1.5, spanGaps: false };
      if (spec.kind === 'bars') {
        one.fill = colour + '88';
        one.paths = uPlot.paths.bars({ size: [0.9 / Math.max(1, spec.series.length), 60], align: 0, gap: 1 });
        one.points = { show: false };
      } else if (spec.kind === 'points') {
        one.paths = function () { return null; };
        one.points = { show: true, size: 8, fill: colour };
      } else if (spec.kind === 'control') {
        if (i === 0) one.points = { show: true, size: 7, fill: colour };
        else { one.dash = [6, 4]; one.points = { show: false }; one.stroke = i === 1 ? '#555' : '#d62728'; }
      }
      series.push(one);
    });
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var opts = {
      width: Math.min(900, Math.max(420, window.innerWidth - 80)),
      height: 260,
      series: series,
      scales: { x: { time: false } },
      axes: [{ label: spec.xLabel }, {}],
      legend: { show: true },
    };
    var plot = new uPlot(opts, data, box);
    window.cablequalCharts.push({
      id: box.id,
      kind: spec.kind,
      series: spec.series.map(function (s, i) {
        return { label: s.label, points: plot.data[i + 1].filter(function (v) { return v !== null && v !== undefined; }).length };
      }),
    });
  }

  function fmtS(s) {
    if (s === null || s === undefined) return '–';
    var m = Math.floor(s / 60), r = Math.floor(s % 60);
    return m + ':' + (r < 10 ? '0' : '') + r;
  }
  function cell(tr, text) {
    var td = document.createElement('td');
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function perNode(obj, f) {
    if (!obj) return '–';
    return Object.keys(obj).map(function (n) { return n + ': ' + f(obj[n]); }).join('; ');
  }
  function rate(r) { return r === 0 ? '0' : r < 1000 ? r.toFixed(r < 10 ? 1 : 0) : r.toExponential(1); }
  function num(v, d) { return v === null || v === undefined ? '–' : Number(v).toFixed(d); }

  function renderLive(runs) {
    var body = document.querySelector('#live tbody');
    if (!body) return;
    body.textContent = '';
    runs.forEach(function (r) {
      var st = r.status || {};
      var tr = document.createElement('tr');
      tr.setAttribute('data-run', r.runId);
      cell(tr, r.runId + (r.simulated ? ' (simulated)' : ''));
      cell(tr, r.label || '');
      cell(tr, r.station || '');
      cell(tr, r.phase || 'starting').className = 'phase';
      cell(tr, fmtS(r.elapsedS)).className = 'elapsed';
      cell(tr, fmtS(r.remainingS)).className = 'remaining';
      cell(tr, perNode(st.laneRates, function (l) { return (l || []).map(rate).join(' / '); })).className = 'rates';
      cell(tr, perNode(st.nicTempC, function (v) { return num(v, 0); })).className = 'nic';
      cell(tr, perNode(st.gpuTempC, function (v) { return num(v, 0); }) + ' | ' + perNode(st.gpuUtilPct, function (v) { return num(v, 0) + ' %'; }));
      cell(tr, r.updatedAt ? r.updatedAt.replace('T', ' ').slice(0, 19) : '–');
      body.appendChild(tr);
    });
    if (!runs.length) {
      var tr = document.createElement('tr');
      cell(tr, 'no run in progress').colSpan = 10;
      body.appendChild(tr);
    }
    document.body.setAttribute('data-live-updates', String(Number(document.body.getAttribute('data-live-updates') || 0) + 1));
  }

  function startLive() {
    var initial = document.getElementById('live-initial');
    if (!initial) return;
    renderLive(JSON.parse(initial.textContent));
    var state = document.getElementById('live-state');
    var es = new EventSource('/api/live/stream');
    es.addEventListener('open', function () { state.textContent = 'connected'; });
    es.addEventListener('error', function () { state.textContent = 'reconnecting'; });
    es.addEventListener('live', function (e) { renderLive(JSON.parse(e.data)); });
  }

  document.querySelectorAll('script[data-chart]').forEach(drawChart);
  startLive();
  document.body.setAttribute('data-ready', '1');
})();
`;

// The dashboard's one script (served as /static/dashboard.js): draws each embedded chart with uPlot from the JSON
// beside it, draws a run page's charts from /api/runs/<id>/series (growing over its stream while the run runs), and
// keeps the live table current from /api/live/stream. It writes text with textContent only, never HTML, so the
// untrusted strings it shows (labels, node names) cannot become markup. Drawn charts are listed in
// window.cablequalCharts (id, kind, each series' points and last value, each axis' label and the tick labels it shows)
// for the browser tests and for anyone inspecting the page.
export const CLIENT_JS = String.raw`'use strict';
(function () {
  window.cablequalCharts = [];
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];
  var PHASE_FILLS = ['rgba(0,0,0,0.04)', 'rgba(31,119,180,0.08)', 'rgba(255,127,14,0.08)', 'rgba(44,160,44,0.08)'];

  function width() { return Math.min(1100, Math.max(420, window.innerWidth - 80)); }
  function lastOf(xs) { for (var i = xs.length - 1; i >= 0; i--) if (xs[i] !== null && xs[i] !== undefined) return xs[i]; return null; }
  function count(xs) { var n = 0; for (var i = 0; i < xs.length; i++) if (xs[i] !== null && xs[i] !== undefined) n++; return n; }

  // The entry of window.cablequalCharts for one chart, kept current as uPlot lays out its axes.
  function register(id, kind, labels, axisLabels) {
    var entry = { id: id, kind: kind, series: labels.map(function (l) { return { label: l, points: 0, last: null }; }), axes: axisLabels.map(function (l) { return { label: l, ticks: [] }; }) };
    var old = window.cablequalCharts.findIndex(function (c) { return c.id === id; });
    if (old >= 0) window.cablequalCharts.splice(old, 1, entry); else window.cablequalCharts.push(entry);
    return entry;
  }
  function fill(entry, data) {
    entry.series.forEach(function (s, i) { s.points = count(data[i + 1]); s.last = lastOf(data[i + 1]); });
  }
  // An axis' tick labels, recorded as drawn.
  function ticks(entry, i, fmt) {
    return function (u, splits) { var out = splits.map(fmt); entry.axes[i].ticks = out; return out; };
  }
  function fmtNum(v) { return v === null ? '' : String(+v.toFixed(6)); }
  function fmtExp(v) { return v === null ? '' : v.toExponential(0).replace('e+', 'e'); }
  function fmtMin(v) { return v === null ? '' : String(Math.round(v / 60)); }

  // Horizontal reference lines and phase bands are series and hooks of the charts that need them.
  function drawChart(script) {
    var spec = JSON.parse(script.textContent);
    var box = script.previousElementSibling;
    var entry = register(box.id, spec.kind, spec.series.map(function (s) { return s.label; }), [spec.xLabel, spec.yLabel]);
    var series = [{ label: spec.xLabel }];
    spec.series.forEach(function (s, i) {
      var colour = s.colour || palette[i % palette.length];
      var style = s.style || (spec.kind === 'bars' ? 'bars' : spec.kind === 'points' ? 'points' : 'line');
      var one = { label: s.label, stroke: colour, width: 1.5, spanGaps: style === 'dash' };
      if (style === 'bars') {
        one.fill = colour + 'cc';
        one.paths = uPlot.paths.bars({ size: [0.96, Infinity], align: 0, gap: 1 });
        one.points = { show: false };
      } else if (style === 'points') {
        one.paths = function () { return null; };
        one.points = { show: true, size: 9, fill: colour, stroke: colour };
      } else if (style === 'dash') {
        one.dash = [6, 4];
        one.points = { show: false };
      } else if (spec.kind === 'control') {
        if (i === 0) one.points = { show: true, size: 7, fill: colour };
        else { one.dash = [6, 4]; one.points = { show: false }; one.stroke = i === 1 ? '#555' : '#d62728'; }
      }
      series.push(one);
    });
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var xFmt = spec.xTicks === 'log10' ? function (v) { return '1e' + Math.round(v); } : fmtNum;
    var xAxis = { label: spec.xLabel, values: ticks(entry, 0, xFmt) };
    if (spec.xTicks === 'integer' || spec.xTicks === 'log10') { xAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]; }
    if (spec.kind === 'bars' && spec.barWidth) { xAxis.incrs = [spec.barWidth, spec.barWidth * 2, spec.barWidth * 4, spec.barWidth * 10]; }
    var yAxis = { label: spec.yLabel, values: ticks(entry, 1, fmtNum), size: 60 };
    if (spec.yTicks === 'integer') yAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
    var scales = { x: { time: false } , y: {} };
    if (spec.xRange) scales.x.range = function () { return spec.xRange; };
    if (spec.yRange) scales.y.range = function () { return spec.yRange; };
    var plot = new uPlot({ width: width(), height: 280, series: series, scales: scales, axes: [xAxis, yAxis], legend: { show: true } }, data, box);
    fill(entry, plot.data);
  }

  // Phase bands (shaded, named) and the decision line, drawn under and over a run chart.
  function runHooks(info) {
    function x(u, v) { return u.valToPos(v, 'x', true); }
    return {
      drawClear: [function (u) {
        var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
        ctx.save();
        (info.phases || []).forEach(function (p, i) {
          var x0 = x(u, p.startS), x1 = x(u, p.endS === null ? info.untilS : p.endS);
          if (!(x1 > x0)) return;
          ctx.fillStyle = PHASE_FILLS[i % PHASE_FILLS.length];
          ctx.fillRect(x0, top, x1 - x0, h);
        });
        ctx.restore();
      }],
      draw: [function (u) {
        var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
        ctx.save();
        ctx.font = (10 * devicePixelRatio) + 'px sans-serif';
        ctx.fillStyle = '#555';
        (info.phases || []).forEach(function (p) {
          var x0 = x(u, p.startS), x1 = x(u, p.endS === null ? info.untilS : p.endS);
          if (x1 - x0 > ctx.measureText(p.name).width + 6) ctx.fillText(p.name, x0 + 3, top + 12 * devicePixelRatio);
        });
        if (info.decision) {
          var xd = x(u, info.decision.atS);
          ctx.strokeStyle = '#d62728'; ctx.lineWidth = 2 * devicePixelRatio; ctx.setLineDash([]);
          ctx.beginPath(); ctx.moveTo(xd, top); ctx.lineTo(xd, top + h); ctx.stroke();
          ctx.fillStyle = '#d62728';
          ctx.fillText(info.decision.outcome + ' decided', xd + 4, top + 26 * devicePixelRatio);
        }
        ctx.restore();
      }],
    };
  }

  // Whole minutes only: the axis is labelled in minutes.
  var timeIncrs = [60, 120, 300, 600, 900, 1800, 3600, 7200];

  // A chart's frame on the run page: its box (the id the page links to) and its title.
  function chartBox(id, titleText) {
    var box = document.createElement('div');
    box.className = 'chart'; box.id = id;
    var title = document.createElement('div');
    title.className = 'chart-title';
    title.textContent = titleText;
    box.appendChild(title);
    return box;
  }

  // Every run chart's time axis (seconds, labelled in minutes since the start): from the start to where the run is, at
  // least a minute.
  function xScale(s) {
    return { time: false, range: function () { return [0, Math.max(60, s.untilS)]; } };
  }
  function xAxis(entry) {
    return { label: 'minutes since start', incrs: timeIncrs, values: ticks(entry, 0, fmtMin) };
  }

  // One receiver: each lane's BER (log), NIC temperature (right axis), the soak bound and the limit lines.
  function receiverChart(host, s, rx, old) {
    var id = 'ber-' + rx.node;
    var labels = [], series = [{ label: 'minutes since start' }], data = [rx.t];
    var outlier = rx.outlier ? rx.outlier.lane : -1;
    rx.laneBer.forEach(function (v, i) {
      var name = 'lane ' + i + (i === outlier ? ' (outlier)' : '');
      labels.push(name);
      series.push({ label: name, scale: 'ber', stroke: palette[i % palette.length], width: i === outlier ? 3 : 1.2, spanGaps: false, points: { show: false } });
      data.push(v);
    });
    labels.push('NIC °C');
    // The NIC temperature is read every few ticks: a line through its readings.
    series.push({ label: 'NIC °C', scale: 'C', stroke: '#6a3d9a', width: 1.5, dash: [5, 3], spanGaps: true, points: { show: false } });
    data.push(rx.nicTempC);
    labels.push('soak bound (worst lane, 95% upper)');
    series.push({ label: 'soak bound (worst lane, 95% upper)', scale: 'ber', stroke: '#000', width: 1.5, dash: [8, 4], spanGaps: true, points: { show: false } });
    data.push(rx.soakBoundBer);
    var lim = s.limits;
    [['FEC limit ' + lim.fecLimitBer.toExponential(1), lim.fecLimitBer, '#000'], ['FAIL line ' + lim.failBer.toExponential(1), lim.failBer, '#d62728'], ['MARGINAL line ' + lim.marginalBer.toExponential(1), lim.marginalBer, '#e6a700']].forEach(function (l) {
      labels.push(l[0]);
      series.push({ label: l[0], scale: 'ber', stroke: l[2], width: 1, dash: [3, 3], points: { show: false } });
      data.push(rx.t.map(function () { return l[1]; }));
    });
    var entry = register(id, 'run-ber', labels, ['minutes since start', 'pre-FEC BER', 'NIC °C']);
    entry.node = rx.node;
    entry.outlier = rx.outlier;
    entry.phases = s.phases;
    entry.decision = s.decision;
    entry.soakBound = rx.soakBound;
    if (old && old.plot) { old.plot.setData(data); fill(entry, old.plot.data); return old; }
    var box = chartBox(id, 'Receiver ' + rx.node + ': pre-FEC BER per lane (' + rx.lanes + ' lanes at ' + (rx.laneRateBps / 1e9) + ' Gb/s), NIC temperature');
    if (rx.outlier) {
      var o = document.createElement('div');
      o.className = 'outlier';
      o.textContent = 'outlier: lane ' + rx.outlier.lane + ', at least ' + Math.round(rx.outlier.ratio) + 'x the other lanes over the last ' + rx.outlier.windowS + ' s';
      box.appendChild(o);
    }
    host.appendChild(box);
    var plot = new uPlot({
      width: width(), height: 300, series: series,
      scales: { x: xScale(s), ber: { distr: 3, log: 10 }, C: {} },
      axes: [
        xAxis(entry),
        { label: 'pre-FEC BER', scale: 'ber', size: 60, values: ticks(entry, 1, fmtExp) },
        { label: 'NIC °C', scale: 'C', side: 1, grid: { show: false }, values: ticks(entry, 2, fmtNum) },
      ],
      hooks: runHooks(s),
      legend: { show: true },
    }, data, box);
    fill(entry, plot.data);
    return { plot: plot, box: box };
  }

  function throughputChart(host, s, old) {
    var tp = s.throughput;
    var labels = tp.series.map(function (x) { return x.label; });
    var entry = register('throughput', 'run-throughput', labels, ['minutes since start', 'Gb/s']);
    var data = [tp.t].concat(tp.series.map(function (x) { return x.gbps; }));
    if (old && old.plot) { old.plot.setData(data); fill(entry, old.plot.data); return old; }
    var box = chartBox('throughput', 'Throughput per rail and direction (ib_write_bw during the benchmark and the soaks)');
    host.appendChild(box);
    var plot = new uPlot({
      width: width(), height: 240,
      series: [{ label: 'minutes since start' }].concat(tp.series.map(function (x, i) { return { label: x.label, stroke: palette[i % palette.length], width: 1.2, spanGaps: true, points: { show: false } }; })),
      scales: { x: xScale(s) },
      axes: [xAxis(entry), { label: 'Gb/s', size: 60, values: ticks(entry, 1, fmtNum) }],
      hooks: runHooks(s),
      legend: { show: true },
    }, data, box);
    fill(entry, plot.data);
    return { plot: plot, box: box };
  }

  // A run page's charts; a running run's grow as its stream sends the series again.
  function startRunCharts() {
    var host = document.getElementById('run-charts');
    if (!host) return null;
    var drawn = {};
    function draw(s) {
      var key = s.receivers.map(function (r) { return r.node + ':' + r.laneBer.length; }).join(',') + '|' + s.throughput.series.length + '|' + JSON.stringify(s.phases) + JSON.stringify(s.decision);
      if (drawn.key !== key) { host.textContent = ''; drawn = { key: key }; }
      s.receivers.forEach(function (rx) { drawn[rx.node] = receiverChart(host, s, rx, drawn[rx.node]); });
      if (s.throughput.series.length) drawn.throughput = throughputChart(host, s, drawn.throughput);
      document.body.setAttribute('data-series-until', String(s.untilS));
    }
    // The same request as the page's <link rel=preload>: answered from it.
    var ready = fetch(host.getAttribute('data-series'), { mode: 'cors', credentials: 'same-origin' })
      .then(function (r) {
        if (r.ok) return r.json();
        // A running run whose journal is not there yet: its stream sends the series once it is.
        if (host.getAttribute('data-live') === '1') { host.textContent = 'waiting for the run\'s journal'; return null; }
        throw new Error('series: HTTP ' + r.status);
      })
      .then(function (s) { if (!s) return; performance.mark('cq-series-fetched'); draw(s); performance.mark('cq-charts-drawn'); });
    if (host.getAttribute('data-live') === '1') {
      var es = new EventSource(host.getAttribute('data-stream'));
      es.addEventListener('series', function (e) { draw(JSON.parse(e.data)); });
      es.addEventListener('status', function (e) {
        var st = JSON.parse(e.data);
        if (!st) return;
        var set = function (id, text) { var el = document.getElementById(id); if (el) el.textContent = text; };
        set('run-phase', st.phase || 'starting');
        set('run-elapsed', fmtS(st.elapsedS));
        set('run-left', fmtS(st.remainingS));
      });
      es.addEventListener('finished', function () { es.close(); location.reload(); });
    }
    return ready;
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
  // The lane far above its neighbours (at least 10x the median of the others, above 1 error/s), or -1.
  function outlierOf(l) {
    if (!l || l.length < 2) return -1;
    var top = 0;
    for (var i = 1; i < l.length; i++) if (l[i] > l[top]) top = i;
    var others = l.filter(function (_, i) { return i !== top; }).sort(function (a, b) { return a - b; });
    var mid = others[Math.floor(others.length / 2)];
    return l[top] >= 1 && l[top] >= 10 * Math.max(mid, 0.1) ? top : -1;
  }

  function renderLive(runs) {
    var body = document.querySelector('#live tbody');
    if (!body) return;
    body.textContent = '';
    runs.forEach(function (r) {
      var st = r.status || {};
      var tr = document.createElement('tr');
      tr.setAttribute('data-run', r.runId);
      var first = cell(tr, '');
      var a = document.createElement('a');
      a.href = '/runs/' + encodeURIComponent(r.runId);
      a.textContent = r.runId;
      first.appendChild(a);
      if (r.simulated) first.appendChild(document.createTextNode(' (simulated)'));
      cell(tr, r.label || '');
      cell(tr, r.station || '');
      cell(tr, r.phase || 'starting').className = 'phase';
      cell(tr, fmtS(r.elapsedS)).className = 'elapsed';
      cell(tr, fmtS(r.remainingS)).className = 'remaining';
      var rates = cell(tr, '');
      rates.className = 'rates';
      var nodes = st.laneRates ? Object.keys(st.laneRates) : [];
      if (!nodes.length) rates.textContent = '–';
      nodes.forEach(function (n, k) {
        var l = st.laneRates[n] || [];
        var out = outlierOf(l);
        rates.appendChild(document.createTextNode((k ? '; ' : '') + n + ': '));
        l.forEach(function (v, i) {
          if (i) rates.appendChild(document.createTextNode(' / '));
          var span = document.createElement('span');
          span.textContent = rate(v);
          if (i === out) { span.className = 'outlier'; span.title = 'lane ' + i + ': far above the other lanes'; }
          rates.appendChild(span);
        });
      });
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
  var charts = startRunCharts();
  function ready() { document.body.setAttribute('data-ready', '1'); }
  if (charts) charts.then(ready, function (e) { document.body.setAttribute('data-series-error', String(e)); ready(); });
  else ready();
})();
`;

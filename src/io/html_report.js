// The charts of phaze's HTML report (src/io/html_report.cpp), drawn with Chart.js from the answer the page
// carries. The page records how many charts it drew and every script error and console error on <body> (data-charts,
// data-errors), which its test reads in a headless browser.
(function() {
'use strict';
const errors = [];
const record = (message) => {
  errors.push(String(message));
  document.body.dataset.errors = errors.join(' | ');
};
window.addEventListener('error', (e) => record(e.message));
// What Chart.js reports on the console (a bad option, a chart it cannot draw) counts as an error too.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  record(args.join(' '));
  consoleError(...args);
};
const answer = JSON.parse(document.getElementById('phaze-answer').textContent);
const kind = document.getElementById('phaze-answer').dataset.kind;
const traces = JSON.parse(document.getElementById('phaze-traces').textContent);
const main = document.getElementById('charts');
const palette =
    ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
let drawn = 0;

function fixed(x, digits) {
  return Number(x).toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits});
}
function element(tag, parent, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  parent.appendChild(e);
  return e;
}
function section(title, note) {
  const box = element('section', main);
  element('h2', box, title);
  if (note) element('p', box, note, 'note');
  const holder = element('div', box, undefined, 'chart');
  return element('canvas', holder);
}
function chart(title, note, config) {
  const canvas = section(title, note);
  config.options =
      Object.assign({animation: false, maintainAspectRatio: false, responsive: true}, config.options || {});
  new Chart(canvas, config);
  drawn += 1;
}
function summary(rows) {
  const table = element('table', document.getElementById('summary'));
  for (const [key, value] of rows) {
    const tr = element('tr', table);
    element('th', tr, key);
    element('td', tr, value);
  }
}
function designText(d) {
  return `${d.num_tc} × ${d.tc_width}×${d.tc_depth} TC, ${d.num_vc} × ${d.vc_width} VC, ` +
      `${fixed(d.glb_bytes / 1048576, 0)} MiB GLB, ${fixed(d.hbm_bytes / 1073741824, 0)} GiB HBM`;
}
const mm2 = (d) => d.area_um2 / 1e6;

function searchReport(a) {
  const models = a.models.map((m) => m.model);
  const best = a.best;
  summary([
    ['models', models.join(', ')],
    ['cluster', `${a.settings.devices} devices, global batch ${a.settings.global_batch}`],
    [
      'search',
      `${a.search.stop_rule} rule, ${a.points.toLocaleString('en-US')} points, ` +
          `${a.feasible_points.toLocaleString('en-US')} feasible`
    ],
    ['best design', best ? `${designText(best.design)}, ${fixed(mm2(best.design), 1)} mm²` : 'none feasible'],
    [
      'best throughput',
      best ? `${fixed(best.average_samples_per_s, 2)} samples/s (micro-batch ` +
              `${best.micro_batch}, recomputation ${best.recompute ? 'on' : 'off'})` :
             '—'
    ],
  ]);
  if (!best) return;
  // The design space by area: the Pareto frontier (when asked for), the top list, the best point, the
  // baselines.
  const baselines = [
    ['TPUv4-like', a.baselines.tpuv4_like], ['TPUv4-like 32 GiB', a.baselines.tpuv4_like_32gib],
    ['Spotlight-style', a.baselines.spotlight_style]
  ].filter(([, b]) => b && b.design);
  const point = (p, y) =>
      ({x: mm2(p.design), y: y === undefined ? p.average_samples_per_s : y, label: designText(p.design)});
  const datasets = [];
  const frontier = (a.pareto || []).find((f) => f.frontier === 'average') || (a.pareto || [])[0];
  if (frontier) {
    const pts = frontier.points.map((p) => ({x: mm2(p.design), y: p.samples_per_s, label: designText(p.design)}));
    datasets.push({
      label: `Pareto frontier (${frontier.frontier}, with energy)`,
      data: pts,
      backgroundColor: '#bab0ac',
      pointRadius: 2
    });
    const line = frontier.points.filter((p) => p.area_frontier)
                     .map((p) => ({x: mm2(p.design), y: p.samples_per_s, label: designText(p.design)}));
    datasets.push({
      label: 'frontier of samples/s against area',
      data: line,
      showLine: true,
      borderColor: '#59a14f',
      backgroundColor: '#59a14f',
      pointRadius: 3,
      stepped: 'after'
    });
  }
  datasets.push({label: 'top list', data: a.top.map((p) => point(p)), backgroundColor: '#4e79a7', pointRadius: 5});
  datasets.push({
    label: 'best point',
    data: [point(best)],
    backgroundColor: '#e15759',
    pointRadius: 9,
    pointStyle: 'star',
    borderColor: '#e15759'
  });
  baselines.forEach(([name, b], i) => datasets.push({
    label: name,
    data: [point(b)],
    pointRadius: 7,
    pointStyle: 'triangle',
    backgroundColor: palette[(i + 5) % 10]
  }));
  chart(
      'Design space: throughput against chip area',
      frontier ? 'Every point of the Pareto frontier (grey), its points on the frontier of throughput against ' +
              'area alone (green), the top list, the best point and the baselines.' :
                 'The top list, the best point and the baselines; search with --pareto to draw the frontier.',
      {
        type: 'scatter',
        data: {datasets},
        options: {
          scales:
              {x: {title: {display: true, text: 'chip area (mm²)'}}, y: {title: {display: true, text: 'samples/s'}}},
          plugins: {tooltip: {callbacks: {label: (c) => `${c.raw.label}: ${fixed(c.raw.y, 2)} samples/s`}}}
        }
      });
  // Each model's throughput at the best point beside the baselines.
  const bars = [{label: 'best point', data: best.models.map((m) => m.samples_per_s || 0), backgroundColor: '#e15759'}];
  baselines.forEach(
      ([name, b], i) => bars.push(
          {label: name, data: b.models.map((m) => m.samples_per_s || 0), backgroundColor: palette[(i + 5) % 10]}));
  chart('Throughput per model against the baselines', undefined, {
    type: 'bar',
    data: {labels: models, datasets: bars},
    options: {scales: {y: {title: {display: true, text: 'samples/s'}}}}
  });
  // Where each model's time per batch goes at the best point.
  const parts = ['pipeline_steady_state', 'pipeline_fill_drain', 'data_parallel_sync', 'optimizer_step'];
  chart('Time per batch at the best point', 'Seconds per batch of each model\'s plan, by part.', {
    type: 'bar',
    data: {
      labels: models,
      datasets: parts.map((part, i) => ({
                            label: part.replaceAll('_', ' '),
                            backgroundColor: palette[i],
                            data: best.models.map((m) => (m.time_per_batch_parts_s || {})[part] || 0)
                          }))
    },
    options: {indexAxis: 'y', scales: {x: {stacked: true, title: {display: true, text: 'seconds'}}, y: {stacked: true}}}
  });
  // What one device of each stage holds at its peak, per model, against the chip's HBM (PHAZE's planners say
  // it per stage).
  const staged =
      best.models.filter((m) => m.plan && m.plan.stages.some((s) => s.memory_bytes_per_device !== undefined));
  if (staged.length) {
    const gib = 1073741824;
    const most = Math.max(...staged.map((m) => m.plan.stages.length));
    chart(
        'Memory per device at the best point',
        `GiB one device of each pipeline stage holds at its peak; the chip has ` +
            `${fixed(best.design.hbm_bytes / gib, 0)} GiB of HBM.`,
        {
          type: 'bar',
          data: {
            labels: Array.from({length: most}, (_, k) => `stage ${k + 1}`),
            datasets: staged.map((m, i) => ({
                                   label: m.model,
                                   backgroundColor: palette[i % 10],
                                   data: m.plan.stages.map((s) => (s.memory_bytes_per_device || 0) / gib)
                                 }))
          },
          options: {scales: {y: {title: {display: true, text: 'GiB per device'}}}}
        });
  }
}

const breakdownParts = [
  'forward_s', 'backward_s', 'recompute_s', 'tp_comm_s', 'cp_comm_s', 'ep_comm_s', 'pp_comm_s', 'bubble_s', 'dp_comm_s',
  'optimizer_s'
];
const memoryParts = [
  'weights_bytes', 'gradients_bytes', 'optimizer_bytes', 'activations_bytes', 'runtime_bytes', 'allocator_bytes',
  'reserve_bytes'
];
function label(key) { return key.replace(/_(s|bytes)$/, '').replaceAll('_', ' '); }
function planText(p) {
  return `tp ${p.tp} pp ${p.pp} dp ${p.dp}` + (p.cp > 1 ? ` cp ${p.cp}` : '') + (p.ep > 1 ? ` ep ${p.ep}` : '') +
      `, mbs ${p.micro_batch}` + (p.vp > 1 ? `, vp ${p.vp}` : '') +
      (p.recompute !== 'none' ? `, recompute ${p.recompute}` : '') + (p.precision ? `, ${p.precision}` : '');
}
function runCharts(runs, labels, title) {
  chart(
      `${title}: where the iteration goes`,
      'Seconds of each part of the iteration (the critical path\'s ' +
          'share of each; overlapped work is not counted twice).',
      {
        type: 'bar',
        data: {
          labels,
          datasets: breakdownParts.map((part, i) => ({
                                         label: label(part),
                                         backgroundColor: palette[i % 10],
                                         data: runs.map((r) => r.breakdown[part] || 0)
                                       }))
        },
        options:
            {indexAxis: 'y', scales: {x: {stacked: true, title: {display: true, text: 'seconds'}}, y: {stacked: true}}}
      });
  chart(`${title}: memory per GPU`, 'GiB on the GPU that needs most, by kind, against its capacity.', {
    type: 'bar',
    data: {
      labels,
      datasets: memoryParts
                    .map((part, i) => ({
                           label: label(part),
                           backgroundColor: palette[i % 10],
                           data: runs.map((r) => (r.memory[part] || 0) / 1073741824)
                         }))
                    .concat([{
                      type: 'line',
                      label: 'capacity',
                      borderColor: '#000',
                      backgroundColor: '#000',
                      pointRadius: 14,
                      pointStyle: 'line',
                      pointBorderWidth: 3,
                      showLine: false,
                      stack: 'capacity',  // not piled on the memory
                      data: runs.map((r) => r.memory.capacity_bytes / 1073741824)
                    }])
    },
    options: {scales: {x: {stacked: true}, y: {stacked: true, title: {display: true, text: 'GiB'}}}}
  });
}
function predictReport(a) {
  summary([
    ['model', String(a.model)], ['system', String(a.system)], ['plan', planText(a.plan)],
    ['iteration', `${fixed(a.iteration_time_s * 1e3, 1)} ms`],
    ['throughput', `${fixed(a.tokens_per_s_per_gpu, 0)} tokens/s per GPU, MFU ${fixed(100 * a.mfu, 1)} %`],
    ['fits in memory', a.fits ? 'yes' : 'no']
  ]);
  runCharts([a], [planText(a.plan)], 'The run');
}
function planReport(a) {
  summary([
    ['model', String(a.model)], ['system', String(a.system)], ['GPUs', String(a.gpus)],
    ['plans', `${a.evaluated} evaluated, ${a.fitting} fit in memory`]
  ]);
  if (!a.best.length) return;
  const labels = a.best.map((r, i) => `${i + 1}. ${planText(r.plan)}`);
  runCharts(a.best, labels, 'The best plans side by side');
}

// A Chrome trace (--trace): one row per track, each event a bar from its start to its end.
function traceReport(trace, index) {
  const events = trace.traceEvents || [];
  const names = new Map();
  for (const e of events)
    if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, e.args.name);
  const spans = events.filter((e) => e.ph === 'X');
  if (!spans.length) return;
  // A chip of many cores: its first and last 24 tracks (the tensor cores first, the link last).
  let tracks = [...new Set(spans.map((e) => `${e.pid}/${e.tid}`))];
  const allTracks = tracks.length;
  if (tracks.length > 48) tracks = tracks.slice(0, 24).concat(tracks.slice(-24));
  const shown = new Set(tracks);
  // Colours by phase: a layer schedule's core kind (tensor, vector, fused), else the first word of an event's
  // name (forward, backward, recompute, all-reduce, ...).
  const phase = (e) => (['tensor', 'vector', 'fused'].includes(e.cat) ? e.cat : String(e.name).split(' ')[0]);
  const processes = events.filter((e) => e.ph === 'M' && e.name === 'process_name');
  const cats = [...new Set(spans.map(phase))];
  const limit = 20000;
  const datasets = cats.map((cat, i) => ({
                              label: cat,
                              backgroundColor: palette[i % 10],
                              borderSkipped: false,
                              barPercentage: 0.8,
                              data: spans.filter((e) => phase(e) === cat && shown.has(`${e.pid}/${e.tid}`))
                                        .slice(0, limit)
                                        .map((e) => ({
                                               x: [e.ts / 1e3, (e.ts + e.dur) / 1e3],
                                               y: names.get(`${e.pid}/${e.tid}`) || `${e.pid}/${e.tid}`,
                                               name: e.name
                                             }))
                            }));
  const height = Math.max(240, 28 * tracks.length + 80);
  chart(
      processes.length === 1 ? `Timeline: ${processes[0].args.name}` :
                               `Timeline ${index + 1}: ${spans.length} events on ${tracks.length} tracks`,
      'Milliseconds from the start of the iteration (or of the layer pass).' +
          (tracks.length < allTracks ? ` The first and last 24 of its ${allTracks} tracks.` : ''),
      {
        type: 'bar',
        data: {labels: tracks.map((t) => names.get(t) || t), datasets},
        options: {
          indexAxis: 'y',
          maintainAspectRatio: false,
          grouped: false,
          scales: {x: {title: {display: true, text: 'ms'}}, y: {stacked: true}},
          plugins: {
            tooltip: {
              callbacks: {
                label: (c) => `${c.raw.name}: ` +
                    `${fixed(c.raw.x[0], 3)}–${fixed(c.raw.x[1], 3)} ms`
              }
            }
          }
        }
      });
  main.lastChild.querySelector('.chart').style.height = `${height}px`;
}

if (kind === 'search')
  searchReport(answer);
else if (kind === 'predict')
  predictReport(answer);
else
  planReport(answer);
traces.forEach(traceReport);
// Charts whose canvas has no painted pixel: a chart that failed to draw without an error.
let blank = 0;
for (const canvas of document.querySelectorAll('canvas')) {
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = false;
  for (let i = 3; i < pixels.length && !painted; i += 4) painted = pixels[i] > 0;
  if (!painted) blank += 1;
}
document.body.dataset.blank = String(blank);
document.body.dataset.charts = String(drawn);
})();

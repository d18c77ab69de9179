# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to this collection (controller side).

report.html (issue #18): one self-contained page from the acceptance report JSON (with its outliers, see
_outliers.py), the site report, the drift report and rollout journals. Inline CSS and SVG written here, a few
lines of inline JavaScript for the table filters, a Content-Security-Policy that forbids every request: the
page needs no network when it is viewed. Deterministic (no clock): the same inputs give the same bytes, so a
converged run reports no change. Pure functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from html import escape as _escape

from ansible_collections.gpufleet.cluster.plugins.plugin_utils._outliers import OUTLIER_RUNGS, median, record_key

LADDER = ('dcgm_diag', 'gpu_burn', 'p2p_bandwidth', 'nccl_bench', 'container_gpus', 'rdma_bw')
RUNG_TITLES = {
    'dcgm_diag': 'DCGM diagnostics (failed tests)',
    'gpu_burn': 'gpu-burn, slowest GPU (Gflop/s)',
    'p2p_bandwidth': 'GPU-to-GPU bandwidth, worst pair (GB/s)',
    'nccl_bench': 'NCCL all-reduce bus bandwidth at the check size (GB/s)',
    'container_gpus': 'GPUs seen in a container',
    'rdma_bw': 'RDMA bandwidth per HCA (Gb/s)',
}
COLORS = {'ok': '#3b6ea8', 'fail': '#c0392b', 'warn': '#d68910', 'median': '#27ae60', 'threshold': '#c0392b',
          'grey': '#9aa5b1'}
PALETTE = ('#3b6ea8', '#7d5ba6', '#16a085', '#2c3e50', '#8e6c3a', '#5d6d7e')

CSS = """
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1f2933;background:#f5f7fa}
header{background:#1f2933;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#cbd2d9}
nav{background:#323f4b;padding:6px 24px}nav a{color:#e4e7eb;margin-right:16px;text-decoration:none}
main{padding:12px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #d9e2ec;border-radius:6px;padding:12px 16px;margin:14px 0}
h2{font-size:17px;margin:4px 0 10px}h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border:1px solid #d9e2ec;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f4f8}td.n{text-align:right;font-variant-numeric:tabular-nums}
.fail,.failed{color:#c0392b;font-weight:600}.warn{color:#b9770e;font-weight:600}
.pass,.passed{color:#1e7d4f}.skipped,.muted{color:#7b8794}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #d9e2ec;border-radius:6px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:22px}
.filter{margin:6px 0}.filter input,.filter select{font:inherit;padding:2px 6px;margin-right:8px}
svg{background:#fff;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:#1f2933}
.legend span{margin-right:14px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
ul.named{margin:4px 0;padding-left:20px}
"""

# Filters: a text box and a status selector over the rows of each table with class "filterable".
JS = """
document.querySelectorAll('div.filter').forEach(function (box) {
  var table = document.getElementById(box.dataset.table), text = box.querySelector('input'),
      sel = box.querySelector('select');
  function apply() {
    var q = text.value.toLowerCase(), s = sel ? sel.value : '';
    table.querySelectorAll('tbody tr').forEach(function (tr) {
      var hit = tr.textContent.toLowerCase().indexOf(q) >= 0 && (!s || tr.dataset.status === s);
      tr.style.display = hit ? '' : 'none';
    });
  }
  text.addEventListener('input', apply);
  if (sel) { sel.addEventListener('change', apply); }
});
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def esc(value):
    return _escape('' if value is None else str(value), quote=True)


def fmt(value):
    if isinstance(value, bool) or value is None:
        return '-' if value is None else str(value)
    if isinstance(value, float):
        if abs(value) >= 1000:
            return '%.0f' % value
        return ('%.2f' % value).rstrip('0').rstrip('.')
    return str(value)


def _num(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value) else None


def _size(nbytes):
    for unit, div in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if nbytes >= div:
            return '%g%s' % (round(nbytes / float(div), 1), unit)
    return '%dB' % nbytes


def _mark(rec):
    """ok, warn or fail for a rung record."""
    if rec.get('status') == 'fail':
        return 'fail'
    if (rec.get('outlier') or {}).get('status') in ('warn', 'fail'):
        return (rec.get('outlier') or {}).get('status')
    return 'ok'


def _ticks(lo, hi, count=5):
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / float(count)
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


class _Frame(object):
    """Plot area with a linear (or log2) x axis and a linear y axis."""

    def __init__(self, width, height, xlo, xhi, ylo, yhi, left=64, right=150, top=16, bottom=44):
        self.w, self.h, self.left, self.right, self.top, self.bottom = width, height, left, right, top, bottom
        self.xlo, self.xhi = xlo, (xhi if xhi > xlo else xlo + 1)
        self.ylo, self.yhi = ylo, (yhi if yhi > ylo else ylo + 1)

    def x(self, v):
        return self.left + (v - self.xlo) / float(self.xhi - self.xlo) * (self.w - self.left - self.right)

    def y(self, v):
        return self.top + (1 - (v - self.ylo) / float(self.yhi - self.ylo)) * (self.h - self.top - self.bottom)

    def axes(self, ylabel, xlabel):
        parts = ['<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfcfd" stroke="#d9e2ec"/>'
                 % (self.left, self.top, self.w - self.left - self.right, self.h - self.top - self.bottom)]
        for t in _ticks(self.ylo, self.yhi):
            if self.ylo <= t <= self.yhi:
                yy = self.y(t)
                parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e4e7eb"/>'
                             '<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                             % (self.left, self.w - self.right, yy, yy, self.left - 4, yy + 4, esc(fmt(float(t)))))
        parts.append('<text transform="translate(14,%d) rotate(-90)" text-anchor="middle">%s</text>'
                     % (self.top + (self.h - self.top - self.bottom) // 2, esc(ylabel)))
        parts.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
                     % (self.left + (self.w - self.left - self.right) // 2, self.h - 6, esc(xlabel)))
        return parts


def _svg(width, height, label, parts):
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" '
            'aria-label="%s">%s</svg>' % (width, height, width, height, esc(label), ''.join(parts)))


def rung_plot(rung, profile, points, unit, fleet_median=None, limit=None):
    """Dot plot of every node's figure on one rung in one profile, sorted; thresholds, the fleet median and
    the outlier limit as lines; failing (red) and outlying (amber) nodes marked and named.

    ``points``: dicts with host, label (host or host + device), figure, threshold, kind, mark (ok/warn/fail)."""
    pts = sorted([p for p in points if _num(p['figure']) is not None], key=lambda p: (p['figure'], p['label']))
    if not pts:
        return ''
    thresholds = sorted(set(p['threshold'] for p in pts if _num(p['threshold']) is not None))
    values = [p['figure'] for p in pts] + thresholds + [v for v in (fleet_median, limit) if v is not None]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    width, height = 900, 280
    fr = _Frame(width, height, -0.5, len(pts) - 0.5, max(0.0, lo - pad) if lo >= 0 else lo - pad, hi + pad)
    parts = fr.axes(unit, 'nodes, lowest figure first (%d)' % len(pts))
    right = width - fr.right
    lines = [(t, COLORS['threshold'], '6 3', 'threshold %s' % fmt(t)) for t in thresholds]
    if fleet_median is not None:
        lines.append((fleet_median, COLORS['median'], '', 'median %s' % fmt(fleet_median)))
    if limit is not None:
        lines.append((limit, COLORS['warn'], '2 3', 'outlier limit %s' % fmt(limit)))
    # labels right of the plot, top to bottom, at least 12 px apart
    label_y = -1e9
    for value, color, dash, text in sorted(lines, key=lambda x: -x[0]):
        yy = fr.y(value)
        label_y = max(yy + 4, label_y + 12)
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/>'
                     '<text x="%d" y="%.1f" fill="%s">%s</text>' % (fr.left, right, yy, yy, color, dash, right + 4,
                                                                    label_y, color, esc(text)))
    radius = 4 if len(pts) <= 64 else 2.5
    named = 0
    for i, p in enumerate(pts):
        xx, yy = fr.x(i), fr.y(p['figure'])
        color = COLORS[p['mark']] if p['mark'] != 'ok' else COLORS['ok']
        parts.append('<circle cx="%.1f" cy="%.1f" r="%s" fill="%s"><title>%s: %s %s</title></circle>'
                     % (xx, yy, radius + (1.5 if p['mark'] != 'ok' else 0), color, esc(p['label']), esc(fmt(p['figure'])),
                        esc(unit)))
        if p['mark'] != 'ok':
            named += 1
            dy = -8 - 12 * (named % 3)
            parts.append('<text x="%.1f" y="%.1f" fill="%s" font-weight="600">%s</text>'
                         % (xx + 5, max(fr.top + 10, yy + dy), color, esc(p['label'])))
    return _svg(width, height, '%s %s' % (rung, profile), parts)


def nccl_curves(profile, curves):
    """busbw versus message size (log2 x), one line per node; failing and outlying nodes in colour and named.

    ``curves``: dicts with label, mark, series ([[size_bytes, busbw], ...])."""
    curves = [c for c in curves if c.get('series')]
    if not curves:
        return ''
    sizes = [s for c in curves for s, dummy in c['series'] if s and s > 0]
    bws = [b for c in curves for dummy, b in c['series'] if _num(b) is not None]
    if not sizes or not bws:
        return ''
    width, height = 900, 320
    fr = _Frame(width, height, math.log(min(sizes), 2), math.log(max(sizes), 2), 0.0, max(bws) * 1.05)
    parts = fr.axes('busbw GB/s', 'message size (log scale)')
    lo, hi = int(math.floor(math.log(min(sizes), 2))), int(math.ceil(math.log(max(sizes), 2)))
    step = max(1, (hi - lo) // 10)
    for e in range(lo, hi + 1, step):
        if fr.xlo <= e <= fr.xhi:
            xx = fr.x(e)
            parts.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eef2f6"/><text x="%.1f" y="%d" '
                         'text-anchor="middle">%s</text>' % (xx, xx, fr.top, height - fr.bottom, xx, height - fr.bottom + 14,
                                                             esc(_size(2 ** e))))
    # plain nodes first, marked ones on top
    order = sorted(curves, key=lambda c: (c['mark'] != 'ok', c['label']))
    labelled = 0
    for c in order:
        pts = [(fr.x(math.log(s, 2)), fr.y(b)) for s, b in c['series'] if s and s > 0 and _num(b) is not None]
        if not pts:
            continue
        marked = c['mark'] != 'ok'
        color = COLORS[c['mark']] if marked else COLORS['grey']
        parts.append('<polyline fill="none" stroke="%s" stroke-width="%s" opacity="%s" points="%s"><title>%s</title>'
                     '</polyline>' % (color, 2.2 if marked else 1, 1 if marked else 0.7,
                                      ' '.join('%.1f,%.1f' % p for p in pts), esc(c['label'])))
        if marked:
            labelled += 1
            parts.append('<text x="%.1f" y="%.1f" fill="%s" font-weight="600">%s</text>'
                         % (width - fr.right + 4, min(height - fr.bottom, pts[-1][1] + 4 + 12 * (labelled - 1)), color,
                            esc(c['label'])))
    return _svg(width, height, 'nccl busbw vs size %s' % profile, parts)


def heat_map(label, matrix, unit='GB/s'):
    """A p2p matrix (row -> column -> number or None) as a heat map; the diagonal and missing pairs grey."""
    rows = sorted(matrix, key=lambda r: (len(str(r)), str(r)))
    cols = sorted({c for r in rows for c in (matrix[r] or {})}, key=lambda c: (len(str(c)), str(c)))
    vals = [matrix[r][c] for r in rows for c in cols if r != c and _num((matrix[r] or {}).get(c)) is not None]
    if not rows or not cols or not vals:
        return ''
    hi = max(vals)
    cell = 34 if len(cols) <= 10 else max(8, 340 // len(cols))
    left, top = 40, 30
    title = '%s, %s; colour: share of the best pair, 50 %% or less darkest' % (label, unit)
    width = max(left + cell * len(cols) + 10, left + int(len(title) * 6.2))
    height = top + cell * len(rows) + 10
    parts = ['<text x="%d" y="14">%s</text>' % (left, esc(title))]
    for j, c in enumerate(cols):
        parts.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (left + j * cell + cell // 2, top - 4, esc(c)))
    for i, r in enumerate(rows):
        parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 4, top + i * cell + cell // 2 + 4, esc(r)))
        for j, c in enumerate(cols):
            v = (matrix[r] or {}).get(c)
            if r == c or _num(v) is None:
                fill = '#e4e7eb'
            else:
                # share of the node's best pair: 100 % light, 50 % and below dark red (a link at half speed)
                t = min(1.0, max(0.0, (v / float(hi) - 0.5) / 0.5)) if hi > 0 else 0.0
                fill = 'rgb(%d,%d,%d)' % (int(180 + 40 * t), int(40 + 170 * t), int(40 + 200 * t))
            parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff"><title>%s -> %s: %s %s'
                         '</title></rect>' % (left + j * cell, top + i * cell, cell, cell, fill, esc(r), esc(c),
                                              esc(fmt(v)), esc(unit)))
            if cell >= 30 and _num(v) is not None and r != c:
                parts.append('<text x="%d" y="%d" text-anchor="middle" font-size="9">%s</text>'
                             % (left + j * cell + cell // 2, top + i * cell + cell // 2 + 3, esc('%.0f' % v)))
    return _svg(width, height, label, parts)


def _filter_box(table_id, statuses):
    opts = ''.join('<option value="%s">%s</option>' % (esc(s), esc(s)) for s in statuses)
    sel = '<select aria-label="status"><option value="">every status</option>%s</select>' % opts if statuses else ''
    return ('<div class="filter" data-table="%s"><input type="search" placeholder="filter rows (any text)" '
            'aria-label="filter">%s</div>' % (esc(table_id), sel))


def _table(table_id, header, rows, statuses=None):
    """rows: (status, [cell html...])."""
    head = ''.join('<th>%s</th>' % esc(h) for h in header)
    body = ''.join('<tr data-status="%s">%s</tr>' % (esc(st), ''.join('<td>%s</td>' % c for c in cells))
                   for st, cells in rows)
    box = _filter_box(table_id, statuses) if statuses is not None else ''
    return '%s<table id="%s" class="filterable"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (
        box, esc(table_id), head, body)


def _counts(nodes, hosts):
    """Per rung: pass / fail / skipped / warn counts over ``hosts``."""
    out = {}
    for h in hosts:
        for rec in nodes[h].get('rungs') or []:
            c = out.setdefault(rec.get('rung'), {'pass': 0, 'fail': 0, 'skipped': 0, 'warn': 0})
            st = rec.get('status')
            c[st if st in c else 'skipped'] += 1
            if (rec.get('outlier') or {}).get('status') == 'warn':
                c['warn'] += 1
    return out


def _count_cell(c):
    if not c:
        return '<span class="muted">-</span>'
    bits = ['<span class="pass">%d accepted</span>' % c['pass']]
    if c['fail']:
        bits.append('<span class="fail">%d failed</span>' % c['fail'])
    if c['skipped']:
        bits.append('<span class="skipped">%d skipped</span>' % c['skipped'])
    if c['warn']:
        bits.append('<span class="warn">%d warn</span>' % c['warn'])
    return ' &middot; '.join(bits)


def _group_table(title, nodes, key_of, ladder):
    groups = {}
    for h in sorted(nodes):
        groups.setdefault(key_of(h) or '-', []).append(h)
    rows = []
    for g in sorted(groups):
        hosts = groups[g]
        st = [nodes[h].get('status') for h in hosts]
        counts = _counts(nodes, hosts)
        node_cell = '%d: <span class="pass">%d passed</span>%s%s%s' % (
            len(hosts), st.count('passed'),
            (' &middot; <span class="fail">%d failed</span>' % st.count('failed')) if st.count('failed') else '',
            (' &middot; <span class="skipped">%d skipped</span>' % st.count('skipped')) if st.count('skipped') else '',
            (' &middot; <span class="warn">%d warn</span>' % len([h for h in hosts if nodes[h].get('outlier')]))
            if any(nodes[h].get('outlier') for h in hosts) else '')
        rows.append((None, [esc(g), node_cell] + [_count_cell(counts.get(r)) for r in ladder]))
    head = ''.join('<th>%s</th>' % esc(h) for h in [title, 'nodes'] + list(ladder))
    body = ''.join('<tr>%s</tr>' % ''.join('<td>%s</td>' % c for c in cells) for dummy, cells in rows)
    return '<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (head, body)


def _rec_cell(rec):
    if rec.get('status') == 'skipped':
        return '<span class="skipped">%s</span>' % esc(rec.get('message') or 'skipped')
    mark = _mark(rec)
    cls = {'ok': 'pass', 'warn': 'warn', 'fail': 'fail'}[mark]
    text = '%s %s %s' % (rec.get('status'), fmt(rec.get('figure')) if rec.get('figure') is not None else 'no figure',
                         rec.get('unit') or '')
    if (rec.get('outlier') or {}).get('status'):
        text += ' (%s: outlier)' % rec['outlier']['status']
    dev = (esc(rec['device']) + ': ') if rec.get('device') else ''
    return '%s<span class="%s" title="%s">%s</span>' % (dev, cls, esc(rec.get('message') or ''), esc(text))


def build_html(acceptance, site=None, drift=None, journals=None, title='gpufleet fleet report'):
    """The page. ``acceptance``: the acceptance report with outliers (find_outliers); ``site``: site-report.json
    (host -> verification) or None; ``drift``: drift.json or None; ``journals``: rollout journal.json dicts."""
    acceptance = acceptance or {}
    nodes = acceptance.get('nodes') or {}
    ladder = list(acceptance.get('ladder') or LADDER)
    outl = acceptance.get('outliers') or {}
    summary = acceptance.get('summary') or {}
    site = site if isinstance(site, dict) else {}
    html = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" content="%s">' % esc(CSP),
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            '<title>%s</title><style>%s</style></head><body>' % (esc(title), CSS)]
    html.append('<header><h1>%s</h1><p>%d node(s): %s failed, %s passed, %s skipped, %s not run; %s outlier(s) '
                '(%s%% below the profile median or the node\'s own previous accepted result)</p></header>'
                % (esc(title), len(nodes), summary.get('failed', 0), summary.get('passed', 0), summary.get('skipped', 0),
                   summary.get('not_run', 0), summary.get('outliers', 0), fmt(outl.get('percent', '-'))))
    html.append('<nav><a href="#summary">Summary</a><a href="#outliers">Outliers</a><a href="#rungs">Rungs</a>'
                '<a href="#nccl">NCCL curves</a><a href="#p2p">P2P</a><a href="#nodes">Nodes</a>'
                '<a href="#drift">Drift</a><a href="#rollout">Rollouts</a></nav><main>')

    # --- summary
    cards = [('nodes', len(nodes), ''), ('failed', summary.get('failed', 0), 'fail'),
             ('passed', summary.get('passed', 0), 'pass'), ('skipped', summary.get('skipped', 0), 'skipped'),
             ('not run', summary.get('not_run', 0), 'skipped'), ('outliers', summary.get('outliers', 0), 'warn')]
    html.append('<section id="summary"><h2>Fleet summary</h2><div class="cards">%s</div>' % ''.join(
        '<div class="card"><b class="%s">%s</b>%s</div>' % (cls, esc(v), esc(k)) for k, v, cls in cards))
    html.append('<h3>Per rung, per profile</h3>')
    html.append(_group_table('profile', nodes, lambda h: nodes[h].get('profile'), ladder))
    html.append('<h3>Per rung, per rack</h3>')
    html.append(_group_table('rack', nodes, lambda h: nodes[h].get('rack'), ladder))
    mn = acceptance.get('multinode') or {}
    if mn:
        html.append('<p>Multi-node NCCL: <b>%s</b> %s</p>' % (esc(mn.get('status')), esc(mn.get('message') or '')))
    html.append('</section>')

    # --- outliers
    html.append('<section id="outliers"><h2>Outliers</h2>')
    if outl:
        html.append('<p>Rule: a figure more than %s%% below the median of its profile in this run (profiles with at '
                    'least %s nodes with the figure), or more than %s%% below the node\'s own previous accepted result '
                    '(the earlier reports kept in history/). Rungs: %s. Flagged <b>warn</b>; <b>fail</b> only where '
                    'the profile sets acceptance_outlier_fail.</p>'
                    % (fmt(outl.get('percent')), outl.get('min_fleet'), fmt(outl.get('percent')),
                       esc(', '.join(outl.get('rungs') or []))))
        flagged = outl.get('nodes') or {}
        if flagged:
            html.append('<ul class="named">%s</ul>' % ''.join(
                '<li><span class="%s">%s</span>: %s</li>' % (nodes.get(h, {}).get('outlier', 'warn'), esc(h),
                                                             esc('; '.join(msgs)))
                for h, msgs in sorted(flagged.items())))
        else:
            html.append('<p class="pass">No outliers.</p>')
        if outl.get('notes'):
            html.append('<h3>Notes</h3><ul>%s</ul>' % ''.join('<li>%s</li>' % esc(n) for n in outl['notes']))
    else:
        html.append('<p class="muted">No outlier analysis in this report.</p>')
    html.append('</section>')

    # --- per rung plots
    fleet = {'%s|%s' % (f['profile'], f['rung']): f for f in outl.get('fleet') or []}
    html.append('<section id="rungs"><h2>Rungs: every node against the threshold and the fleet median</h2>')
    plotted = 0
    for rung in ladder:
        by_profile = {}
        for h in sorted(nodes):
            for rec in nodes[h].get('rungs') or []:
                if rec.get('rung') != rung or _num(rec.get('figure')) is None:
                    continue
                by_profile.setdefault(nodes[h].get('profile') or 'none', []).append((h, rec))
        for profile in sorted(by_profile):
            entries = by_profile[profile]
            unit = entries[0][1].get('unit') or ''
            points = [{'host': h, 'label': h + (' ' + r['device'] if r.get('device') else ''), 'figure': r['figure'],
                       'threshold': r.get('threshold'), 'mark': _mark(r)} for h, r in entries]
            keys = set(record_key(r) for dummy, r in entries)
            med, limit = None, None
            if len(keys) == 1:
                f = fleet.get('%s|%s' % (profile, keys.pop()))
                med, limit = (f['median'], f['limit']) if f else (median([p['figure'] for p in points]), None)
            else:  # several HCAs: the median of every port's figure, for orientation
                med = median([p['figure'] for p in points])
            if rung not in OUTLIER_RUNGS:  # counts with an exact pass mark: the threshold is the reference
                med, limit = None, None
            svg = rung_plot(rung, profile, points, unit, med, limit)
            if not svg:
                continue
            plotted += 1
            named = [p for p in points if p['mark'] != 'ok']
            html.append('<h3 id="rung-%s-%s">%s - profile %s</h3>%s'
                        % (esc(rung), esc(profile), esc(RUNG_TITLES.get(rung, rung)), esc(profile), svg))
            html.append('<div class="legend"><span><i class="sw" style="background:%s"></i>node</span><span><i class="sw" '
                        'style="background:%s"></i>failed</span><span><i class="sw" style="background:%s"></i>outlier'
                        '</span></div>' % (COLORS['ok'], COLORS['fail'], COLORS['warn']))
            if named:
                html.append('<ul class="named">%s</ul>' % ''.join(
                    '<li class="%s">%s: %s %s%s</li>' % (p['mark'], esc(p['label']), esc(fmt(p['figure'])), esc(unit),
                                                         ' (failed)' if p['mark'] == 'fail' else ' (outlier)')
                    for p in sorted(named, key=lambda p: p['figure'])))
    if not plotted:
        html.append('<p class="muted">No rung measured a figure in this run (no GPU / no HCA on the nodes, or check '
                    'mode): nothing to plot.</p>')
    html.append('</section>')

    # --- nccl curves
    html.append('<section id="nccl"><h2>NCCL bus bandwidth versus message size</h2>')
    curves_by_profile = {}
    for h in sorted(nodes):
        for rec in nodes[h].get('rungs') or []:
            series = (rec.get('detail') or {}).get('busbw_by_size') if isinstance(rec.get('detail'), dict) else None
            if rec.get('rung') == 'nccl_bench' and series:
                curves_by_profile.setdefault(nodes[h].get('profile') or 'none', []).append(
                    {'label': h, 'mark': _mark(rec), 'series': series})
    drawn = 0
    for profile in sorted(curves_by_profile):
        svg = nccl_curves(profile, curves_by_profile[profile])
        if svg:
            drawn += 1
            html.append('<h3>profile %s: %d node(s)</h3>%s' % (esc(profile), len(curves_by_profile[profile]), svg))
    if not drawn:
        html.append('<p class="muted">No nccl-tests rows in this run.</p>')
    html.append('</section>')

    # --- p2p heat maps: the lowest node of each profile and every failing or outlying one (at most 8)
    html.append('<section id="p2p"><h2>GPU-to-GPU bandwidth matrices</h2>')
    cands = []
    for h in sorted(nodes):
        for rec in nodes[h].get('rungs') or []:
            m = (rec.get('detail') or {}).get('matrix') if isinstance(rec.get('detail'), dict) else None
            if rec.get('rung') == 'p2p_bandwidth' and m and _num(rec.get('figure')) is not None:
                cands.append((h, rec, m))
    chosen, seen = [], set()
    for h, rec, m in sorted(cands, key=lambda x: (_mark(x[1]) == 'ok', x[1]['figure'], x[0])):
        prof = nodes[h].get('profile')
        if _mark(rec) != 'ok' or prof not in seen:
            chosen.append((h, rec, m))
            seen.add(prof)
        if len(chosen) >= 8:
            break
    for h, rec, m in chosen:
        why = {'ok': 'lowest of its profile', 'warn': 'outlier', 'fail': 'failed'}[_mark(rec)]
        svg = heat_map('%s (%s, worst pair %s GB/s)' % (h, why, fmt(rec['figure'])), m)
        if svg:
            html.append('<div>%s</div>' % svg)
    if not chosen:
        html.append('<p class="muted">No p2p matrices in this run.</p>')
    html.append('</section>')

    # --- nodes
    rows = []
    for h in sorted(nodes):
        n = nodes[h]
        by = {}
        for rec in n.get('rungs') or []:
            by.setdefault(rec.get('rung'), []).append(rec)
        status = n.get('status') or '-'
        shown = status + (' (%s: outlier)' % n['outlier'] if n.get('outlier') else '')
        dev = (site.get(h) or {}).get('deviations') or []
        rows.append(('warn' if n.get('outlier') == 'warn' else status,
                     [esc(h), esc(n.get('profile') or '-'), esc(n.get('rack') or '-'),
                      '<span class="%s">%s</span>' % (esc('warn' if n.get('outlier') == 'warn' else status), esc(shown)),
                      esc('; '.join(dev)) if dev else '<span class="muted">-</span>']
                     + ['<br>'.join(_rec_cell(r) for r in by.get(rung, [])) or '<span class="muted">-</span>'
                        for rung in ladder]))
    html.append('<section id="nodes"><h2>Nodes</h2>%s</section>' % _table(
        'nodes-table', ['node', 'profile', 'rack', 'result', 'deviations from profile'] + ladder, rows,
        ['failed', 'warn', 'passed', 'skipped', 'not run']))

    # --- drift
    html.append('<section id="drift"><h2>Drift</h2>')
    if isinstance(drift, dict) and drift.get('nodes') is not None:
        html.append('<p>Mode %s: %s drifted node(s): %s; not checked: %s.</p>' % (
            esc(drift.get('mode')), len(drift.get('drifted_nodes') or []), esc(', '.join(drift.get('drifted_nodes') or []) or 'none'),
            esc(', '.join(drift.get('unchecked') or []) or 'none')))
        drows = []
        for h in sorted(drift['nodes']):
            n = drift['nodes'][h] or {}
            for s in n.get('settings') or []:
                drows.append(('setting', [esc(h), esc(s.get('kind')), esc(s.get('task')), esc(s.get('action'))]))
            for m in n.get('version_lock') or []:
                drows.append(('version lock', [esc(h), esc('version lock / hardware'), esc(m), '']))
            if not n.get('drift'):
                drows.append(('none', [esc(h), '<span class="pass">no drift</span>', '', '']))
        html.append(_table('drift-table', ['node', 'kind', 'setting / deviation', 'action'], drows,
                           ['setting', 'version lock', 'none']))
    else:
        html.append('<p class="muted">No drift report (playbooks/drift.yml writes drift.json) was found.</p>')
    html.append('</section>')

    # --- rollout journals
    html.append('<section id="rollout"><h2>Rollout journal</h2>')
    jrows = []
    for j in journals or []:
        if not isinstance(j, dict):
            continue
        for e in j.get('nodes') or []:
            steps = ' > '.join(str(s.get('step')) for s in e.get('steps') or [] if isinstance(s, dict))
            jrows.append((e.get('verdict') or '-', [
                esc(j.get('rollout_id') or e.get('rollout_id')), esc(e.get('host')),
                '<span class="%s">%s</span>' % ({'passed': 'pass', 'failed': 'fail'}.get(e.get('verdict'), 'warn'),
                                                esc(e.get('verdict'))),
                esc(e.get('reason') or ''), esc((e.get('before') or {}).get('summary', '')),
                esc((e.get('after') or {}).get('summary', '')), esc(steps)]))
    if jrows:
        html.append(_table('rollout-table', ['rollout', 'node', 'verdict', 'reason', 'before', 'after', 'steps'], jrows,
                           sorted(set(r[0] for r in jrows))))
    else:
        html.append('<p class="muted">No rollout journal (playbooks/rollout.yml writes journal.json) was found.</p>')
    html.append('</section></main><script>%s</script></body></html>\n' % JS)
    return ''.join(html)

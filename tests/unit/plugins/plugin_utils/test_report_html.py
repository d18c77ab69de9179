# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html (plugins/plugin_utils/_report_html.py) from the fleet of tests/unit/fleet_report_corpus.py (REAL
recorded outputs parsed by the collection's parsers, spread over SYNTHETIC node names, one PLANTED slow node, one
slower than its history), plus a HANDMADE drift report and rollout journal.

The page is opened in a real headless browser (Debian's ``chromium``, driven over the DevTools protocol on a pipe,
in a network namespace of its own when ``unshare`` works): no console error, no exception, no request other than
the file itself, the plots drawn (SVG boxes with a size), the planted nodes named in the page's text, the filters
working; a screenshot is written (``GPUFLEET_REPORT_SCREENSHOTS=DIR`` keeps it, as docs/images has them).
Skipped cleanly without chromium."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import time

import pytest

import fleet_report_corpus as F
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._outliers import find_outliers
from ansible_collections.gpufleet.cluster.plugins.plugin_utils._report_html import build_html, heat_map, nccl_curves

# HANDMADE drift report and rollout journal in the shapes playbooks/drift.yml and rollout.yml write
DRIFT = {'mode': 'check', 'drift': True, 'drifted_nodes': ['gpu-a02'], 'unchecked': [], 'summary': {'sysctl_tuning': 1},
         'nodes': {'gpu-a01': {'drift': False, 'settings': [], 'consequences': [], 'version_lock': [], 'checked': True},
                   'gpu-a02': {'drift': True, 'settings': [{'task': 'Set net.core.rmem_max', 'role': 'sysctl_tuning',
                                                            'kind': 'sysctl_tuning', 'action': 'ansible.posix.sysctl',
                                                            'diff': []}],
                               'consequences': [], 'version_lock': ['driver 550.90.07, profile wants 550.163.01'],
                               'checked': True}}}
JOURNAL = {'rollout_id': 'q4-570', 'lock_id': 'abc', 'profile': 'profile_a100', 'nodes': [
    {'host': 'gpu-a01', 'verdict': 'passed', 'reason': '', 'before': {'summary': 'driver 550'},
     'after': {'summary': 'driver 570'}, 'steps': [{'step': 'drain'}, {'step': 'apply'}, {'step': 'resume'}]},
    {'host': 'gpu-a04', 'verdict': 'failed', 'reason': 'verify: gpu_burn 13000 < 13512', 'before': {'summary': 'driver 550'},
     'after': {'summary': 'driver 570'}, 'steps': [{'step': 'drain'}, {'step': 'apply'}, {'step': 'verify'}]}]}


@pytest.fixture(scope='module')
def page():
    from conftest import CORPUS
    if CORPUS is None or not all((CORPUS / f).is_file() for f in F.FILES):
        pytest.skip('the recorded nccl/gpu-burn/p2p/perftest outputs are not all in the corpus (full corpus not found)')
    fig = F.parse_corpus(CORPUS)
    rep = find_outliers(F.report(F.results(fig)), [F.history(fig)], 5)
    site = {'gpu-a02': {'deviations': ['driver 550.90.07, profile wants 550.163.01']}}
    return build_html(rep, site=site, drift=DRIFT, journals=[JOURNAL])


def test_page_is_self_contained_and_deterministic(page):
    assert page.startswith('<!DOCTYPE html>') and page.endswith('</html>\n')
    assert not re.search(r'(src|href|action)\s*=\s*["\']?(https?:|//|ftp:)', page)
    assert '<link rel="icon" href="data:,">' in page and "default-src &#x27;none&#x27;" in page
    assert page.count('<svg') == 5 * 2 + 2 + 2  # rungs x profiles (a100, small), NCCL curves, p2p heat maps
    assert '<script src' not in page


def test_planted_nodes_are_marked_and_named(page):
    # the slow node in the nccl dot plot and its curve, the history node in the gpu_burn plot, both in the list
    assert re.search(r'<text [^>]*fill="#d68910" font-weight="600">gpu-a06</text>', page)
    assert re.search(r'<text [^>]*fill="#d68910" font-weight="600">gpu-a03</text>', page)
    assert re.search(r'<polyline fill="none" stroke="#d68910" stroke-width="2.2"[^>]*><title>gpu-a06</title>', page)
    for other in ('gpu-a01', 'gpu-a02', 'gpu-a04', 'gpu-a05', 'gpu-a07', 'gpu-a08'):
        assert not re.search(r'font-weight="600">%s</text>' % other, page)


def test_small_svg_helpers_draw_nothing_without_data():
    assert nccl_curves('p', [{'label': 'a', 'mark': 'ok', 'series': [[0, 1.0]]}]) == ''
    assert heat_map('x', {'0': {'0': None}}) == ''
    assert build_html({}).count('<svg') == 0


def _chromium():
    # Debian's /usr/bin/chromium is a shell launcher; the binary itself keeps the DevTools pipe's descriptors
    if os.access('/usr/lib/chromium/chromium', os.X_OK):
        return '/usr/lib/chromium/chromium'
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Cdp(object):
    """Chrome DevTools protocol over --remote-debugging-pipe (fd 3: to the browser, fd 4: from it; NUL-framed JSON)."""

    def __init__(self, argv, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def child():  # out of the way first, so neither end is clobbered when it already is fd 3 or 4
            high_r, high_w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 100), fcntl.fcntl(from_w, fcntl.F_DUPFD, 100)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
        self.proc = subprocess.Popen(argv + ['--remote-debugging-pipe', '--user-data-dir=%s' % profile],
                                     preexec_fn=child, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.ids, self.events = b'', 0, []

    def _read(self, deadline):
        while b'\0' not in self.buf:
            if time.time() > deadline:
                raise AssertionError('chromium did not answer in time')
            chunk = os.read(self.from_r, 65536)
            if not chunk:
                raise AssertionError('chromium closed the pipe (exit %s)' % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg.decode('utf-8'))

    def call(self, method, params=None, session=None, timeout=30):
        self.ids += 1
        msg = {'id': self.ids, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_w, json.dumps(msg).encode('utf-8') + b'\0')
        deadline = time.time() + timeout
        while True:
            got = self._read(deadline)
            if got.get('id') == self.ids:
                if 'error' in got:
                    raise AssertionError('%s: %s' % (method, got['error']))
                return got.get('result', {})
            self.events.append(got)

    def wait_for(self, method, timeout=30):
        deadline = time.time() + timeout
        for ev in self.events:
            if ev.get('method') == method:
                return ev
        while True:
            got = self._read(deadline)
            self.events.append(got)
            if got.get('method') == method:
                return got

    def close(self):
        try:
            self.call('Browser.close', timeout=5)
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)


def _isolated():
    """``unshare -n`` when it works here (root): the browser gets a network namespace with no interface."""
    unshare = shutil.which('unshare')
    if unshare and subprocess.run([unshare, '-n', 'true'], capture_output=True, check=False).returncode == 0:
        return [unshare, '-n']
    return []


def test_opens_in_a_real_browser_without_errors_or_requests(page, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip('no chromium (Debian: apt-get install --no-install-recommends chromium)')
    html = tmp_path / 'report.html'
    html.write_text(page)
    argv = _isolated() + [exe, '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
                          '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
                          '--disable-sync', '--disable-extensions', '--disable-default-apps', '--no-pings',
                          '--disable-domain-reliability', '--disable-client-side-phishing-detection',
                          '--disable-features=Translate,OptimizationHints,MediaRouter,NetworkTimeServiceQuerying',
                          '--window-size=1400,1000', 'about:blank']
    cdp = _Cdp(argv, str(tmp_path / 'profile'))
    try:
        target = cdp.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        sess = cdp.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        for domain in ('Page', 'Runtime', 'Log', 'Network'):
            cdp.call(domain + '.enable', session=sess)
        cdp.call('Emulation.setDeviceMetricsOverride', {'width': 1400, 'height': 1000, 'deviceScaleFactor': 1,
                                                        'mobile': False}, session=sess)
        cdp.call('Page.navigate', {'url': html.as_uri()}, session=sess)
        cdp.wait_for('Page.loadEventFired')

        def js(expr):
            return cdp.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True}, session=sess)['result'].get('value')

        text = js('document.body.innerText')
        svg_boxes = js('Array.from(document.querySelectorAll("svg")).map(function (s) { var r = s.getBoundingClientRect(); '
                       'return [r.width, r.height]; })')
        # the filters: typing a node name leaves its row only; the status selector keeps the warn rows
        js('var b = document.querySelector("div.filter[data-table=nodes-table] input"); b.value = "gpu-a06"; '
           'b.dispatchEvent(new Event("input"))')
        shown = js('Array.from(document.querySelectorAll("#nodes-table tbody tr")).filter(function (t) { '
                   'return t.style.display !== "none"; }).map(function (t) { return t.cells[0].textContent; })')
        js('var b = document.querySelector("div.filter[data-table=nodes-table] input"); b.value = ""; '
           'var s = document.querySelector("div.filter[data-table=nodes-table] select"); s.value = "warn"; '
           's.dispatchEvent(new Event("change"))')
        warned = js('Array.from(document.querySelectorAll("#nodes-table tbody tr")).filter(function (t) { '
                    'return t.style.display !== "none"; }).map(function (t) { return t.cells[0].textContent; })')
        js('var s = document.querySelector("div.filter[data-table=drift-table] select"); s.value = "version lock"; '
           's.dispatchEvent(new Event("change"))')
        drift_rows = js('Array.from(document.querySelectorAll("#drift-table tbody tr")).filter(function (t) { '
                        'return t.style.display !== "none"; }).length')
        shot = cdp.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True,
                                                   'clip': {'x': 0, 'y': 0, 'width': 1400, 'height': 2600, 'scale': 1}},
                        session=sess, timeout=60)
        keep = os.environ.get('GPUFLEET_REPORT_SCREENSHOTS')
        if keep:  # the summary, one rung and the NCCL curves, as docs/images has them
            for name, selector in (('summary', '#summary'), ('rung-nccl', '#rungs h3[id="rung-nccl_bench-profile_a100"]'),
                                   ('nccl-curves', '#nccl')):
                box = js('(function () { var e = document.querySelector(%s); var r = e.getBoundingClientRect(); '
                         'var n = e.tagName === "H3" ? e.nextElementSibling.nextElementSibling.nextElementSibling '
                         ': e; var b = n.getBoundingClientRect(); return [r.left, r.top + window.scrollY, '
                         'e.tagName === "H3" ? 1000 : r.width + 24, b.bottom - r.top]; })()' % json.dumps(selector))
                part = cdp.call('Page.captureScreenshot', {
                    'format': 'png', 'captureBeyondViewport': True,
                    'clip': {'x': max(0, box[0] - 12), 'y': max(0, box[1] - 12), 'width': box[2],
                             'height': box[3] + 24, 'scale': 1}}, session=sess, timeout=60)
                with open(os.path.join(keep, 'report-%s.png' % name), 'wb') as out:
                    out.write(base64.b64decode(part['data']))
        time.sleep(0.2)
        cdp.call('Runtime.evaluate', {'expression': '1'}, session=sess)  # drain late events
    finally:
        cdp.close()
    png = base64.b64decode(shot['data'])
    (tmp_path / 'report.png').write_bytes(png)
    if keep:
        shutil.copy(str(html), os.path.join(keep, 'report-fleet.html'))
        shutil.copy(str(tmp_path / 'report.png'), os.path.join(keep, 'report-fleet-browser.png'))

    errors = [e for e in cdp.events if e.get('method') == 'Runtime.exceptionThrown'
              or (e.get('method') == 'Runtime.consoleAPICalled' and e['params'].get('type') in ('error', 'assert'))
              or (e.get('method') == 'Log.entryAdded' and e['params']['entry'].get('level') == 'error')]
    assert errors == []
    urls = [e['params']['request']['url'] for e in cdp.events if e.get('method') == 'Network.requestWillBeSent']
    assert urls == [html.as_uri()]  # the file itself and nothing else
    assert png[:8] == b'\x89PNG\r\n\x1a\n' and len(png) > 50000
    # 5 rungs with figures x 2 profiles, NCCL curves x 2 profiles, p2p heat maps of the lowest node of each profile
    assert len(svg_boxes) == 14 and all(w > 100 and h > 100 for w, h in svg_boxes)
    assert 'gpu-a06' in text and 'gpu-a03' in text
    assert re.search(r"gpu-a06: nccl_bench: 215.14 GB/s is 8\.4% below the median 234\.9", text)
    assert re.search(r"gpu-a03: gpu_burn: 16991.3 Gflop/s is 7\.4% below this node's previous accepted 18350\.6", text)
    assert shown == ['gpu-a06'] and warned == ['gpu-a03', 'gpu-a06'] and drift_rows == 1

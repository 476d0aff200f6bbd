// fencegate console: a single page with hash routes (#/overview, #/fences, #/fence/KEY,
// #/rejections, #/locks, #/cluster) over the admin API. No inline script or style anywhere (the
// Content-Security-Policy allows only this file and chart.min.js); every value from the API
// reaches the page through textContent, never as HTML.
(function () {
  'use strict';

  const state = {
    session: null,      // GET /ui/session
    summary: null,      // the last GET /admin/summary
    charts: {},         // Chart.js instances of the overview
    overviewTimer: 0,
    fencesNext: null,   // the `next` of the last fence page
    fencesPrefix: '',
    events: null,       // the EventSource of /admin/events
    filters: {},        // the rejections page's filters in force
    seenRequests: new Set(),
    releasing: null,    // the lock the release dialog is for
  };

  const $ = (id) => document.getElementById(id);

  // An element with attributes and children (strings become text nodes).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function cell(value, cls) { return el('td', { class: cls }, value === null || value === undefined ? '–' : value); }
  function num(value) { return cell(value, 'num'); }
  function when(text) { return text ? text.replace('T', ' ').replace('Z', '') : '–'; }
  function fenceLink(key) {
    if (!key) return '–';
    return el('a', { href: '#/fence/' + encodeURIComponent(key), class: 'mono fence-link' }, key);
  }
  function fill(tbody, rows, empty, columns) {
    tbody.replaceChildren(...rows);
    if (rows.length === 0) tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: columns, class: 'hint' }, empty)));
  }

  function showError(message) {
    const banner = $('error-banner');
    banner.textContent = message;
    banner.hidden = !message;
  }

  class ApiError extends Error {
    constructor(status, detail) { super(detail); this.status = status; }
  }

  // A JSON request to the admin API; POSTs carry the session's CSRF token when it has one.
  async function api(path, options) {
    const init = Object.assign({ headers: {}, credentials: 'same-origin' }, options || {});
    if (init.method && init.method !== 'GET' && state.session && state.session.csrf_token) {
      init.headers['X-CSRF-Token'] = state.session.csrf_token;
    }
    const response = await fetch(path, init);
    if (response.status === 401) {
      showLogin();
      throw new ApiError(401, 'the session ended: log in again');
    }
    const body = response.status === 204 ? null : await response.json();
    if (!response.ok) throw new ApiError(response.status, (body && (body.detail || body.title)) || response.statusText);
    return body;
  }

  // ---- Login ----

  function showLogin() {
    closeEvents();
    $('nav').hidden = true;
    $('logout').hidden = true;
    $('who').textContent = '';
    for (const page of document.querySelectorAll('.page')) page.hidden = page.id !== 'login';
    $('login-failed').hidden = new URLSearchParams(location.search).get('login') !== 'failed';
    $('login-key').focus();
  }

  async function logout() {
    try {
      await api('/ui/logout', { method: 'POST' });
    } catch (error) {
      showError('Logout failed: ' + error.message);
      return;
    }
    location.replace('/ui/');
  }

  // ---- Overview ----

  const palette = ['#1f6feb', '#2e7d32', '#8e24aa', '#ef6c00', '#00838f', '#6d4c41'];

  function trafficDatasets(series) {
    const sets = [];
    series.routes.forEach((route, i) => {
      const color = palette[i % palette.length];
      sets.push({ label: route.route + ' admitted', data: route.admitted, borderColor: color,
                  backgroundColor: color, pointRadius: 0, borderWidth: 2, tension: 0.2 });
      sets.push({ label: route.route + ' refused', data: route.refused, borderColor: '#c62828',
                  backgroundColor: '#c62828', borderDash: [5, 3], pointRadius: 0, borderWidth: 2 });
    });
    return sets;
  }

  function reasonTotals(refusals) {
    const totals = new Map();
    for (const item of refusals) totals.set(item.reason, (totals.get(item.reason) || 0) + item.count);
    return totals;
  }

  function drawCharts(summary) {
    if (typeof Chart === 'undefined') return;
    const length = summary.series.routes.length ? summary.series.routes[0].admitted.length : 60;
    const labels = Array.from({ length }, (_, i) => (i - length + 1) + 's');
    const datasets = trafficDatasets(summary.series);
    if (!state.charts.traffic) {
      state.charts.traffic = new Chart($('chart-traffic'), {
        type: 'line', data: { labels, datasets },
        options: { animation: false, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false },
                   scales: { y: { beginAtZero: true, title: { display: true, text: 'requests/s' } } } },
      });
    } else {
      state.charts.traffic.data.labels = labels;
      state.charts.traffic.data.datasets = datasets;
      state.charts.traffic.update();
    }
    const totals = reasonTotals(summary.last_minute.refusals);
    const reasonData = { labels: [...totals.keys()],
                         datasets: [{ label: 'refusals', data: [...totals.values()], backgroundColor: '#c62828' }] };
    if (!state.charts.reasons) {
      state.charts.reasons = new Chart($('chart-reasons'), {
        type: 'bar', data: reasonData,
        options: { animation: false, maintainAspectRatio: false, plugins: { legend: { display: false } },
                   scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
      });
    } else {
      state.charts.reasons.data = reasonData;
      state.charts.reasons.update();
    }
  }

  function facts(dl, pairs) {
    dl.replaceChildren();
    for (const [name, value] of pairs) dl.append(el('dt', {}, name), el('dd', {}, value));
  }

  function renderOverview(summary) {
    drawCharts(summary);
    fill($('hour-refusals'), summary.last_hour.refusals.map((r) =>
      el('tr', {}, cell(r.route), cell(el('span', { class: 'reason' }, r.reason)), num(r.count))), 'none', 3);
    fill($('top-keys'), summary.top_fence_keys.map((k) =>
      el('tr', {}, cell(fenceLink(k.fence_key)), num(k.refusals))), 'no refusals', 2);
    fill($('top-clients'), summary.top_clients.map((c) =>
      el('tr', {}, cell(el('a', { href: '#/rejections?client=' + encodeURIComponent(c.client), class: 'mono' }, c.client)),
         num(c.refusals))), 'no refusals', 2);
    const store = summary.store;
    facts($('store-status'), [
      ['Kind', store.kind],
      ['Ready', el('span', { class: store.ready ? 'ok' : 'error' }, store.ready ? 'yes' : 'no (writes fail closed)')],
      ['Sync p99', store.sync_p99_ms === null || store.sync_p99_ms === undefined ? '–' : store.sync_p99_ms + ' ms'],
    ]);
    const cluster = summary.cluster;
    facts($('cluster-status'), [
      ['Cluster', cluster ? el('a', { href: '#/cluster' }, 'on') : 'off (one replica)'],
      ['Locks held', summary.locks ? summary.locks.held : 'lock service off'],
      ['Lock waiters', summary.locks ? summary.locks.waiters : '–'],
    ]);
    fill($('backends'), summary.backends.map((b) =>
      el('tr', {}, cell(b.backend), num(b.servers),
         el('td', { class: 'num ' + (b.healthy < b.servers ? 'error' : 'ok') }, b.healthy))), 'no backends with servers', 3);
    $('build-info').textContent = 'fencegate ' + summary.build.version + ', started ' + when(summary.build.started_at) +
      '; updated ' + when(summary.generated_at);
  }

  async function refreshOverview() {
    try {
      state.summary = await api('/admin/summary');
      renderOverview(state.summary);
      showError('');
    } catch (error) {
      if (error.status !== 401) showError('Summary: ' + error.message);
    }
    if (currentPage() === 'overview') state.overviewTimer = setTimeout(refreshOverview, 2000);
  }

  // ---- Fences ----

  async function loadFences(prefix, after) {
    const query = new URLSearchParams({ limit: '50' });
    if (prefix) query.set('prefix', prefix);
    if (after) query.set('after', after);
    try {
      const page = await api('/admin/fences?' + query);
      const rows = page.fences.map((f) =>
        el('tr', {}, cell(fenceLink(f.fence_key)), num(f.highest_token), cell(when(f.advanced_at))));
      if (after) $('fence-list').append(...rows);
      else fill($('fence-list'), rows, 'no fences' + (prefix ? ' with this prefix' : ''), 3);
      state.fencesNext = page.next;
      state.fencesPrefix = prefix;
      $('fence-more').hidden = page.next === null;
      showError('');
    } catch (error) {
      if (error.status !== 401) showError('Fences: ' + error.message);
    }
  }

  async function loadFence(key) {
    $('fence-key').textContent = key;
    for (const id of ['fence-highest', 'fence-advanced', 'fence-writes', 'fence-last-admitted']) $(id).textContent = '';
    try {
      const fence = await api('/admin/fences/' + encodeURIComponent(key));
      $('fence-highest').textContent = fence.highest_token;
      $('fence-advanced').textContent = when(fence.advanced_at);
      $('fence-writes').textContent = fence.writes_in_flight + ' / ' + fence.writes_waiting;
      $('fence-last-admitted').textContent = fence.last_admitted
        ? 'token ' + fence.last_admitted.token + ' at ' + when(fence.last_admitted.at) + ' (' + fence.last_admitted.request_id + ')'
        : '–';
      const history = fence.history || { advances: [], refusals: [] };
      fill($('fence-advances'), history.advances.map((a) =>
        el('tr', {}, num(a.token), cell(when(a.at)), cell(a.request_id, 'mono'))), 'none since the gateway started', 3);
      fill($('fence-refusals'), history.refusals.map((r) =>
        el('tr', {}, cell(when(r.at)), cell(el('span', { class: 'reason' }, r.reason)), num(r.presented_token), cell(r.client, 'mono'))),
        'none recorded', 4);
      showError('');
    } catch (error) {
      if (error.status === 404) showError('No fence ' + key + ' in the store.');
      else if (error.status !== 401) showError('Fence: ' + error.message);
    }
  }

  // ---- Rejections (live) ----

  function matchesFilters(record) {
    for (const [name, value] of Object.entries(state.filters)) {
      if (value && String(record[name] === null || record[name] === undefined ? '' : record[name]) !== value) return false;
    }
    return true;
  }

  function rejectionRow(r, fresh) {
    return el('tr', { class: 'rejection-row' + (fresh ? ' fresh' : ''), 'data-reason': r.reason, 'data-fence-key': r.fence_key },
      cell(when(r.at)), cell(r.route), cell(el('span', { class: 'reason' }, r.reason)), cell(fenceLink(r.fence_key)),
      num(r.presented_token), num(r.highest_token), cell(r.client, 'mono'), cell(r.principal),
      el('td', { class: 'mono', title: r.request_id + (r.trace_id ? ' trace ' + r.trace_id : '') }, r.method + ' ' + r.path));
  }

  function readFilterForm() {
    const filters = {};
    for (const name of ['route', 'reason', 'fence_key', 'client']) {
      const value = document.querySelector('#rejection-filters [name="' + name + '"]').value.trim();
      if (value) filters[name] = value;
    }
    return filters;
  }

  function writeFilterForm(filters) {
    for (const name of ['route', 'reason', 'fence_key', 'client']) {
      document.querySelector('#rejection-filters [name="' + name + '"]').value = filters[name] || '';
    }
  }

  async function loadRejections() {
    const list = $('rejection-list');
    list.replaceChildren();
    state.seenRequests.clear();
    openEvents();
    const query = new URLSearchParams(Object.assign({ limit: '100' }, state.filters));
    try {
      const page = await api('/admin/rejections?' + query);
      for (const record of page.rejections) {
        if (state.seenRequests.has(record.request_id)) continue;
        state.seenRequests.add(record.request_id);
        list.append(rejectionRow(record, false));
      }
      showError('');
    } catch (error) {
      if (error.status !== 401) showError('Rejections: ' + error.message);
    }
  }

  function openEvents() {
    if (state.events) return;
    const source = new EventSource('/admin/events');
    state.events = source;
    source.onopen = () => { $('live-state').textContent = 'live'; $('live-state').className = 'pill live'; };
    source.onerror = () => { $('live-state').textContent = 'reconnecting'; $('live-state').className = 'pill'; };
    source.addEventListener('rejection', (event) => {
      const record = JSON.parse(event.data);
      if (currentPage() !== 'rejections' || !matchesFilters(record) || state.seenRequests.has(record.request_id)) return;
      state.seenRequests.add(record.request_id);
      const list = $('rejection-list');
      list.prepend(rejectionRow(record, true));
      while (list.children.length > 500) list.lastChild.remove();
    });
    source.addEventListener('lock_grant', () => {
      if (currentPage() === 'locks') loadLocks();
    });
  }

  function closeEvents() {
    if (state.events) state.events.close();
    state.events = null;
  }

  // ---- Locks ----

  async function loadLocks() {
    const off = state.summary && state.summary.locks === null;
    $('locks-off').hidden = !off;
    if (off) {
      fill($('lock-list'), [], 'no lock service', 7);
      fill($('lock-audit'), [], 'no lock service', 6);
      return;
    }
    try {
      const [locks, audit] = await Promise.all([api('/admin/locks'), api('/admin/lock-audit?limit=50')]);
      fill($('lock-list'), locks.locks.map((lock) => {
        const holder = lock.holder;
        const button = holder
          ? el('button', { type: 'button', class: 'danger release', 'data-lock': lock.lock }, 'Force release')
          : '';
        return el('tr', { class: 'lock-row', 'data-lock': lock.lock },
          cell(lock.lock, 'mono'), cell(holder ? holder.owner_id : 'free', 'mono'),
          num(holder ? holder.fencing_token : lock.last_token), num(holder ? holder.expires_in_ms + ' ms' : null),
          num(lock.waiters), num(lock.quarantine_left_ms ? lock.quarantine_left_ms + ' ms' : null), el('td', {}, button));
      }), 'no locks', 7);
      fill($('lock-audit'), audit.map((a) =>
        el('tr', { class: 'audit-row' }, cell(when(a.at)), cell(a.lock, 'mono'), cell(a.operator), cell(a.reason),
           cell(a.previous_owner_id, 'mono'), num(a.fence_token))), 'no forced releases', 6);
      showError('');
    } catch (error) {
      if (error.status !== 401) showError('Locks: ' + error.message);
    }
  }

  function openReleaseDialog(lock) {
    state.releasing = lock;
    $('release-lock').textContent = lock;
    $('release-confirm').value = '';
    $('release-reason').value = '';
    const principal = state.session && state.session.principal;
    $('release-operator').value = principal || '';
    $('release-operator').readOnly = Boolean(principal);
    $('release-error').hidden = true;
    $('release-submit').disabled = true;
    $('release-dialog').showModal();
    $('release-confirm').focus();
  }

  function releaseReady() {
    return $('release-confirm').value === state.releasing && $('release-reason').value.trim() !== '' &&
      $('release-operator').value.trim() !== '';
  }

  async function submitRelease(event) {
    event.preventDefault();
    if (!releaseReady()) return;
    const body = { reason: $('release-reason').value.trim(), operator: $('release-operator').value.trim() };
    try {
      await api('/admin/locks/' + encodeURIComponent(state.releasing) + '/force-release', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      });
      $('release-dialog').close();
      loadLocks();
    } catch (error) {
      $('release-error').textContent = error.message;
      $('release-error').hidden = false;
    }
  }

  // ---- Cluster ----

  async function loadCluster() {
    const on = state.summary && state.summary.cluster !== null;
    $('cluster-off').hidden = on;
    $('cluster-view').hidden = !on;
    if (!on) return;
    try {
      $('cluster-view').textContent = JSON.stringify(await api('/admin/cluster'), null, 2);
    } catch (error) {
      if (error.status !== 401) showError('Cluster: ' + error.message);
    }
  }

  // ---- Routing ----

  function currentPage() {
    const hash = location.hash.replace(/^#\/?/, '');
    const name = hash.split(/[/?]/)[0];
    return name || 'overview';
  }

  function hashQuery() {
    const at = location.hash.indexOf('?');
    return new URLSearchParams(at < 0 ? '' : location.hash.slice(at + 1));
  }

  async function route() {
    clearTimeout(state.overviewTimer);
    const page = currentPage();
    const known = ['overview', 'fences', 'fence', 'rejections', 'locks', 'cluster'];
    const shown = known.includes(page) ? page : 'overview';
    for (const section of document.querySelectorAll('.page')) section.hidden = section.id !== 'page-' + shown;
    for (const link of document.querySelectorAll('#nav a')) {
      link.classList.toggle('active', link.dataset.page === shown || (shown === 'fence' && link.dataset.page === 'fences'));
    }
    showError('');
    if (!state.summary && shown !== 'overview') {
      try { state.summary = await api('/admin/summary'); } catch (error) { if (error.status !== 401) showError(error.message); }
    }
    switch (shown) {
      case 'overview': refreshOverview(); break;
      case 'fences': {
        const prefix = hashQuery().get('prefix') || '';
        $('fence-prefix').value = prefix;
        loadFences(prefix, null);
        break;
      }
      case 'fence': loadFence(decodeURIComponent(location.hash.replace(/^#\/fence\//, ''))); break;
      case 'rejections': {
        state.filters = {};
        for (const [name, value] of hashQuery()) if (value) state.filters[name] = value;
        writeFilterForm(state.filters);
        loadRejections();
        break;
      }
      case 'locks': loadLocks(); break;
      case 'cluster': loadCluster(); break;
    }
  }

  async function start() {
    let session;
    try {
      session = await api('/ui/session');
    } catch (error) {
      if (error.status !== 401) showError('Session: ' + error.message);
      return;
    }
    if (session.auth === 'none') {
      showLogin();
      return;
    }
    state.session = session;
    $('nav').hidden = false;
    $('who').textContent = session.principal ? 'Signed in as ' + session.principal + ' (' + session.auth + ')' : 'Open admin API';
    $('logout').hidden = session.auth !== 'cookie';
    window.addEventListener('hashchange', route);
    route();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('logout').addEventListener('click', logout);
    $('fence-search').addEventListener('submit', (event) => {
      event.preventDefault();
      const prefix = $('fence-prefix').value.trim();
      location.hash = '#/fences' + (prefix ? '?prefix=' + encodeURIComponent(prefix) : '');
    });
    $('fence-more').addEventListener('click', () => loadFences(state.fencesPrefix, state.fencesNext));
    $('rejection-filters').addEventListener('submit', (event) => {
      event.preventDefault();
      const query = new URLSearchParams(readFilterForm()).toString();
      const target = '#/rejections' + (query ? '?' + query : '');
      if (location.hash === target) route(); else location.hash = target;
    });
    $('lock-list').addEventListener('click', (event) => {
      const button = event.target.closest('button.release');
      if (button) openReleaseDialog(button.dataset.lock);
    });
    for (const id of ['release-confirm', 'release-reason', 'release-operator']) {
      $(id).addEventListener('input', () => { $('release-submit').disabled = !releaseReady(); });
    }
    $('release-form').addEventListener('submit', submitRelease);
    $('release-cancel').addEventListener('click', () => $('release-dialog').close());
    start();
  });
})();

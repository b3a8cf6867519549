/**
 * The demo inbox (docs/demo.md), built only on the client SDK: its web components for the bell (unread badge,
 * panel), the inbox (tabs with counts, mark read, read all, snooze, archive) and the toasts; a room with its live
 * presence list, and "send a test notification" through the local runtime's demo endpoint. Settings come from the query string, so the page also works from another origin:
 *
 *   /demo/?api=http://127.0.0.1:3000&user=alice&room=lobby&token_ttl=3600
 *
 * Tokens come from the runtime's demo endpoint while it mints them (its generated development secret); when it
 * answers 404 (SERVICE__AUTH__* set) the page asks its user to paste one, and the user is that token's `sub`.
 */
import { defineNotifyElements } from '../../client/src/elements.js';
import {
  createNotify,
  NotifyError,
  type Preferences,
  type PresenceState,
  type PresenceStatus,
} from '../../client/src/index.js';

const params = new URLSearchParams(location.search);
/** The runtime's origin: the page's own by default. */
const apiBase = (params.get('api') ?? location.origin).replace(/\/+$/, '');
let userId = params.get('user') ?? 'demo-user';
const roomId = params.get('room') ?? 'lobby';
const tokenTtlSecs = Number(params.get('token_ttl') ?? 3600);

const element = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`demo: #${id} is missing from index.html`);
  return found as T;
};

const time = () => new Date().toISOString().slice(11, 23);

/** The activity panel: what happened, newest first; `data-*` attributes say what each line is about. */
const activity = (kind: string, text: string, data: Record<string, string> = {}) => {
  const line = document.createElement('li');
  line.dataset.kind = kind;
  Object.assign(line.dataset, data);
  line.textContent = `${time()} ${text}`;
  element('activity').prepend(line);
};

const showError = (error: unknown) => {
  const text =
    error instanceof NotifyError
      ? `${error.code}: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}`
      : String(error);
  element('error').textContent = text;
  activity('error', text);
};

// ---------------------------------------------------------------------------------------------------------
// Tokens: minted by the runtime's demo endpoint, or pasted in by the user when the runtime mints none

/** Where a pasted token is kept for this tab, so a reload does not ask again. */
const PASTED_TOKEN_KEY = 'notify-demo-token';
/** Set once the token endpoint answered 404: this runtime mints no tokens (SERVICE__AUTH__* is set). */
let tokensFromUser = false;
const pasteWaiters: ((token: string) => void)[] = [];

/** The token's `sub`, read without verifying (the service verifies); undefined when unreadable. */
const subjectOf = (token: string): string | undefined => {
  try {
    const payload = (token.split('.')[1] ?? '').replaceAll('-', '+').replaceAll('_', '/');
    const claims = JSON.parse(atob(payload)) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
};

const showUser = (token: string) => {
  userId = subjectOf(token) ?? userId;
  element('user').textContent = userId;
};

const askForToken = (reason: string): Promise<string> => {
  element('token-reason').textContent = reason;
  element('token-ask').hidden = false;
  return new Promise((resolve) => pasteWaiters.push(resolve));
};

element('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = element<HTMLTextAreaElement>('token-input');
  const token = input.value.trim();
  if (!token) return;
  input.value = '';
  element('token-ask').hidden = true;
  sessionStorage.setItem(PASTED_TOKEN_KEY, token);
  showUser(token);
  activity('token', 'token pasted', { refresh: 'false', pasted: 'true' });
  for (const resolve of pasteWaiters.splice(0)) resolve(token);
});

/** A token from the user: the one pasted in this tab, or a new one when the SDK needs another. */
const tokenFromUser = (forceRefresh: boolean): Promise<string> => {
  const pasted = sessionStorage.getItem(PASTED_TOKEN_KEY);
  if (pasted && !forceRefresh) {
    showUser(pasted);
    return Promise.resolve(pasted);
  }
  sessionStorage.removeItem(PASTED_TOKEN_KEY);
  return askForToken(
    pasted
      ? 'The token is about to expire, or the service refused it: paste a new one.'
      : 'This runtime mints no tokens (SERVICE__AUTH__* is set): paste a user token from your IdP, or from `npm run -s token -- --user alice` with the same settings.',
  );
};

/** The send form needs the runtime's service token, which it only has with its generated secret. */
const sendingUnavailable = () => {
  element('send-unavailable').hidden = false;
  for (const control of element('send').querySelectorAll('input, button'))
    (control as HTMLInputElement).disabled = true;
};

/** The local runtime's token endpoint (docs/demo.md); a real app asks its own backend or IdP here. */
const fetchToken = async (forceRefresh: boolean): Promise<string> => {
  if (tokensFromUser) return tokenFromUser(forceRefresh);
  const response = await fetch(`${apiBase}/demo/api/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: userId, expires_in_secs: tokenTtlSecs }),
  });
  if (response.status === 404) {
    tokensFromUser = true;
    sendingUnavailable();
    activity('token', 'the runtime mints no tokens: asking for one', { refresh: String(forceRefresh) });
    return tokenFromUser(false);
  }
  const body = (await response.json()) as { token?: string; message?: string };
  if (!response.ok || !body.token)
    throw new Error(`token endpoint: ${response.status} ${body.message ?? ''}`);
  activity('token', forceRefresh ? 'fresh token (refresh)' : 'token', { refresh: String(forceRefresh) });
  return body.token;
};

const notify = createNotify({
  apiUrl: `${apiBase}/api/v1`,
  wsUrl: `${apiBase.replace(/^http/, 'ws')}/ws`,
  getToken: ({ forceRefresh }) => fetchToken(forceRefresh),
});

// ---------------------------------------------------------------------------------------------------------
// Bell, inbox and toasts: the SDK's web components (<notify-bell>, <notify-inbox>, <notify-toasts> in index.html)

defineNotifyElements({ notify });
// A change the service refused (the store has undone it), or a failed load.
document.addEventListener('notify-error', (event) => showError((event as CustomEvent).detail));

// ---------------------------------------------------------------------------------------------------------
// Connection state and the frames, from the realtime client (for the activity panel)

notify.realtime.on('notification', (frame) => {
  activity('notification', `${frame.channel} ${frame.title}`, { id: frame.id, channel: frame.channel });
});

notify.realtime.on('state', ({ state, reason }) => {
  const badge = element('state');
  badge.textContent = state;
  badge.dataset.state = state;
  activity('state', `${state}${reason ? ` (${reason.code})` : ''}`, { state });
});

notify.realtime.on('session', (session) => {
  activity(
    'session',
    session.resumed
      ? `session ${session.sessionId} resumed, ${session.replayed} missed frame(s) replayed`
      : `session ${session.sessionId} started`,
    { resumed: String(session.resumed), replayed: String(session.replayed) },
  );
  // A new session may have missed presence changes: read the room again.
  if (!session.resumed) void loadRoom();
});

notify.realtime.on('sessionExpired', () => activity('session', 'previous session expired: feed reloaded'));
notify.realtime.on('error', (error) =>
  activity('error', `${error.code}: ${error.message}`, { code: error.code }),
);

// ---------------------------------------------------------------------------------------------------------
// The room and its presence list

const members = new Map<string, PresenceState>();

const renderRoom = () => {
  const rows = [...members]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([member, status]) => {
      const row = document.createElement('li');
      row.dataset.user = member;
      row.dataset.status = status;
      row.textContent = `${member}${member === userId ? ' (you)' : ''} — ${status}`;
      return row;
    });
  element('presence').replaceChildren(...rows);
};

const loadRoom = async () => {
  try {
    const presence = await notify.api.getRoomPresence(roomId);
    members.clear();
    for (const member of presence.members)
      if (member.status !== 'offline') members.set(member.user_id, member.status);
    renderRoom();
  } catch (error) {
    showError(error);
  }
};

notify.realtime.on('presence', (frame) => {
  if (frame.scope !== `room:${roomId}`) return;
  if (frame.change === 'leave' || frame.status === 'offline') members.delete(frame.user_id);
  else members.set(frame.user_id, frame.status);
  renderRoom();
});

element<HTMLSelectElement>('status').addEventListener('change', (event) => {
  const status = (event.target as HTMLSelectElement).value as PresenceStatus;
  notify.realtime.setPresence(status).catch(showError);
});

// ---------------------------------------------------------------------------------------------------------
// "Send a test notification": the local runtime creates it with its development service token

element('send').addEventListener('submit', async (event) => {
  event.preventDefault();
  element('error').textContent = '';
  const channels = [
    ...(element<HTMLInputElement>('send-in-app').checked ? ['in_app'] : []),
    ...(element<HTMLInputElement>('send-toast').checked ? ['toast'] : []),
  ];
  try {
    const response = await fetch(`${apiBase}/demo/api/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: userId,
        title: element<HTMLInputElement>('send-title').value,
        body: `sent at ${time()}`,
        channels,
      }),
    });
    const body = (await response.json()) as { id?: string; code?: string; message?: string };
    if (!response.ok) throw new Error(`${body.code ?? response.status}: ${body.message ?? ''}`);
    activity('sent', `sent notification ${body.id}`, { id: body.id ?? '' });
  } catch (error) {
    showError(error);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Preferences (docs/preferences.md): one rule per event-type pattern, saved with the others; required types shown

const PREFERENCE_CHANNELS = ['in_app', 'toast', 'realtime'] as const;
const checkboxOf = (channel: string) => element<HTMLInputElement>(`prefs-${channel.replace('_', '-')}`);
let preferences: Preferences | undefined;

const renderPreferences = (current: Preferences) => {
  preferences = current;
  const list = element('prefs-rules');
  list.replaceChildren(
    ...current.rules.map((rule) => {
      const line = document.createElement('li');
      line.dataset.pattern = rule.event_type;
      const off = PREFERENCE_CHANNELS.filter((channel) => rule.channels[channel] === false);
      line.textContent = `${rule.event_type}: ${off.length > 0 ? `off on ${off.join(', ')}` : 'all on'}`;
      return line;
    }),
  );
  const rule = current.rules.find(
    (candidate) => candidate.event_type === element<HTMLInputElement>('prefs-pattern').value,
  );
  for (const channel of PREFERENCE_CHANNELS) checkboxOf(channel).checked = rule?.channels[channel] !== false;
};

const loadPreferences = async () => {
  const current = await notify.api.getPreferences();
  renderPreferences(current);
  const required = current.defaults.rules.filter((rule) => rule.required).map((rule) => rule.event_type);
  element('prefs-required').textContent =
    required.length > 0 ? `Always delivered: ${required.join(', ')}` : '';
};

element('prefs').addEventListener('submit', async (event) => {
  event.preventDefault();
  element('error').textContent = '';
  const pattern = element<HTMLInputElement>('prefs-pattern').value.trim();
  const channels = Object.fromEntries(
    PREFERENCE_CHANNELS.map((channel) => [channel, checkboxOf(channel).checked]),
  );
  const others = (preferences?.rules ?? []).filter((rule) => rule.event_type !== pattern);
  try {
    const saved = await notify.api.setPreferences({
      rules: [...others, { event_type: pattern, channels }],
      muted_topics: [...(preferences?.muted_topics ?? [])],
    });
    renderPreferences(saved);
    activity('preferences', `preferences saved for ${pattern}`, { pattern });
  } catch (error) {
    showError(error);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Pushes: what the local push stand-ins received for this user's devices, and marking a token dead

interface UserPushes {
  readonly devices: readonly { token: string; provider: string; app_id: string | null }[];
  readonly pushes: readonly {
    provider: string;
    token: string;
    push_id: string | null;
    payload: unknown;
    at: string;
  }[];
}

const pushesRequest = async (path: string, init: RequestInit = {}): Promise<Response> => {
  const response = await fetch(`${apiBase}/demo/api/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${await fetchToken(false)}`, 'content-type': 'application/json' },
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    throw new Error(`${path}: ${response.status} ${body.message ?? ''}`);
  }
  return response;
};

const loadPushes = async () => {
  const { devices, pushes } = (await (await pushesRequest('pushes')).json()) as UserPushes;
  element('push-devices').replaceChildren(
    ...devices.map((device) => {
      const line = document.createElement('li');
      line.dataset.token = device.token;
      const received = pushes.filter((push) => push.token === device.token).length;
      line.textContent = `${device.provider} ${device.token} (${received} received) `;
      const kill = document.createElement('button');
      kill.type = 'button';
      kill.textContent = 'Mark dead';
      kill.addEventListener('click', async () => {
        try {
          await pushesRequest('pushes/dead', {
            method: 'POST',
            body: JSON.stringify({ token: device.token }),
          });
          activity('push', `marked dead: ${device.token}`, { token: device.token });
        } catch (error) {
          showError(error);
        }
      });
      line.append(kill);
      return line;
    }),
  );
  element('pushes').replaceChildren(
    ...pushes.map((push) => {
      const line = document.createElement('li');
      line.dataset.pushId = push.push_id ?? '';
      line.textContent = `${push.at.slice(11, 19)} ${push.provider} → ${push.token}: ${JSON.stringify(push.payload)}`;
      return line;
    }),
  );
};

element('pushes-refresh').addEventListener('click', () => loadPushes().catch(showError));

// ---------------------------------------------------------------------------------------------------------

element('user').textContent = userId;
loadPreferences().catch(showError);
element('room-name').textContent = roomId;
notify.realtime.joinRoom(roomId).then(loadRoom, showError);
notify.start().catch(showError);
// For the browser console (and nothing else): the SDK objects behind the page.
(globalThis as { notifyDemo?: unknown }).notifyDemo = notify;

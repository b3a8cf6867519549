/**
 * The settings form of `<notify-settings>`: a user's own delivery preferences (time zone, quiet hours, digest
 * choices, channel rules per event type or category), read with `GET /preferences` and saved whole with
 * `PUT /preferences`, beside the service defaults (read-only). Plain DOM; the element gives it its shadow root.
 */

import type { NotifyApi } from './api.js';
import { h } from './dom.js';
import type { NotifyError } from './errors.js';
import type { PreferenceDefaults, Preferences, PreferencesRequest } from './wire.js';

type Rule = PreferencesRequest['rules'][number];
type Digest = NonNullable<PreferencesRequest['digests']>[number];
type QuietWindow = NonNullable<PreferencesRequest['quiet_hours']>['windows'][number];
type Channel = keyof Rule['channels'];
type Day = QuietWindow['days'][number];

const CHANNELS: readonly (readonly [Channel, string])[] = [
  ['in_app', 'In-app'],
  ['toast', 'Toast'],
  ['realtime', 'Live update'],
  ['push', 'Push'],
];
const DAYS: readonly Day[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
/** The digest windows offered (seconds after the first notification); a stored other value is offered too. */
const WINDOWS: readonly (readonly [number, string])[] = [
  [900, '15 minutes'],
  [3600, '1 hour'],
  [21_600, '6 hours'],
  [86_400, '24 hours'],
];

export const SETTINGS_CSS = `
:host { display: block; background: var(--_bg); }
input, select, button { font: inherit; color: inherit; }
form { padding: 0.25rem 1rem 1rem; }
fieldset { border: 1px solid var(--_border); border-radius: var(--_radius); margin: 0.75rem 0 0; padding: 0.5rem 0.75rem 0.75rem; min-width: 0; }
legend { font-weight: 600; padding: 0 0.25rem; }
ul { list-style: none; margin: 0; padding: 0; }
li > fieldset { margin-top: 0.5rem; }
li > fieldset > legend { font-weight: 400; color: var(--_muted); }
label { display: inline-flex; flex-wrap: wrap; gap: 0.3rem; align-items: center; margin: 0.2rem 0.6rem 0.2rem 0; max-width: 100%; white-space: nowrap; }
.days label { gap: 0.15rem; }
input:not([type=checkbox]), select { border: 1px solid var(--_border); border-radius: 0.3rem; padding: 0.15rem 0.3rem; background: var(--_bg); max-width: 100%; min-width: 0; }
[aria-invalid=true] { border-color: var(--_badge-bg) !important; outline: 1px solid var(--_badge-bg); }
.days { border: 0; padding: 0; margin: 0.2rem 0; }
.days legend { font-weight: 400; float: left; padding: 0 0.4rem 0 0; }
.note { color: var(--_muted); font-size: 0.85em; margin: 0.3rem 0 0; }
.add, .remove { border: 1px solid var(--_border); background: var(--_bg); border-radius: 0.35rem; padding: 0.2rem 0.55rem; cursor: pointer; margin-top: 0.5rem; }
.save { background: var(--_accent); color: var(--_accent-fg); border: 0; border-radius: 0.35rem; padding: 0.4rem 1rem; cursor: pointer; font-weight: 600; }
.bar { display: flex; gap: 0.75rem; align-items: center; margin-top: 0.9rem; flex-wrap: wrap; }
.status { color: var(--_muted); margin: 0; }
.error { color: var(--_badge-bg); margin: 0.75rem 0 0; }
.error:empty { display: none; }
.error ul { list-style: disc; padding-left: 1.2rem; }
`;

/** `pattern` (an event type or category pattern) lies wholly inside `required` (`*`, `prefix.*` or exact). */
const within = (pattern: string, required: string): boolean =>
  required === '*' ||
  pattern === required ||
  (required.endsWith('.*') && pattern.startsWith(required.slice(0, -1)) && pattern !== '*');

const labelled = (text: string, control: HTMLElement): HTMLLabelElement => h('label', {}, text, control);

const select = (options: readonly (readonly [string, string])[], value: string, attributes = {}) => {
  const node = h('select', attributes, ...options.map(([key, text]) => h('option', { value: key }, text)));
  node.value = value;
  return node;
};

const input = (type: string, value: string, attributes: Record<string, string> = {}) => {
  const node = h('input', { type, ...attributes });
  node.value = value;
  return node;
};

/** A list of rows with an Add button; each row reads itself back (in the order shown). */
class RowList<T> {
  readonly rows: { readonly node: HTMLLIElement; readonly read: () => T }[] = [];
  readonly list = h('ul');
  readonly section: HTMLFieldSetElement;

  constructor(
    legend: string,
    addLabel: string,
    private readonly noun: string,
    private readonly build: (value: T | undefined, row: HTMLFieldSetElement) => () => T,
    ...extra: Node[]
  ) {
    const add = h('button', { type: 'button', class: 'add' }, addLabel);
    add.addEventListener('click', () => {
      this.add(undefined);
      (this.rows.at(-1)?.node.querySelector('input, select') as HTMLElement | null)?.focus();
    });
    this.section = h('fieldset', {}, h('legend', {}, legend), ...extra, this.list, add);
  }

  set(values: readonly T[]): void {
    this.rows.length = 0;
    this.list.replaceChildren();
    for (const value of values) this.add(value);
  }

  private add(value: T | undefined): void {
    const row = h('fieldset', {}, h('legend', {}, `${this.noun} ${this.rows.length + 1}`));
    const read = this.build(value, row);
    const remove = h('button', { type: 'button', class: 'remove' }, `Remove ${this.noun.toLowerCase()}`);
    const node = h('li', {}, row);
    row.append(remove);
    remove.addEventListener('click', () => {
      this.rows.splice(
        this.rows.findIndex((entry) => entry.node === node),
        1,
      );
      node.remove();
      this.rows.forEach((entry, index) => {
        const legend = entry.node.querySelector('legend');
        if (legend) legend.textContent = `${this.noun} ${index + 1}`;
      });
      this.section.querySelector<HTMLElement>('.add')?.focus();
    });
    this.rows.push({ node, read });
    this.list.append(node);
  }
}

/** "Event type" or "Category", and the pattern: the key every rule and digest choice is made of. */
const patternControls = (row: HTMLElement, value: { event_type?: string; category?: string } | undefined) => {
  const kind = select(
    [
      ['event_type', 'Event type'],
      ['category', 'Category'],
    ],
    value?.category !== undefined ? 'category' : 'event_type',
  );
  const pattern = input('text', value?.category ?? value?.event_type ?? '', {
    placeholder: 'marketing.*',
    required: '',
    spellcheck: 'false',
  });
  row.append(labelled('Applies to', kind), labelled('Pattern', pattern));
  return {
    kind,
    pattern,
    read: () => ({ [kind.value]: pattern.value.trim() }) as { event_type: string } | { category: string },
  };
};

export interface SettingsForm {
  readonly node: HTMLElement;
  /** Reads the user's preferences (and the defaults) and shows them. */
  load(api: NotifyApi): Promise<void>;
}

export const createSettingsForm = (onError: (error: unknown) => void): SettingsForm => {
  let api: NotifyApi | undefined;
  let stored: Preferences | undefined;
  let defaults: PreferenceDefaults | undefined;

  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  // Browsers from before 2022 lack the list: the browser's zone (and a stored one) are then the choices.
  const zones: readonly string[] = Intl.supportedValuesOf?.('timeZone') ?? [browserZone];
  const timeZone = h('select', { name: 'time_zone' });
  const quietNote = h('p', { class: 'note' });

  const quiet = new RowList<QuietWindow>(
    'Quiet hours',
    'Add quiet hours',
    'Quiet window',
    (value, row) => {
      const boxes = DAYS.map((day, index) => {
        const box = input('checkbox', day);
        box.checked = value ? value.days.includes(day) : true;
        return [day, box, h('label', {}, box, DAY_NAMES[index] ?? day)] as const;
      });
      const start = input('time', value?.start ?? '22:00', { required: '' });
      const end = input('time', value?.end ?? '07:00', { required: '' });
      row.append(
        h('fieldset', { class: 'days' }, h('legend', {}, 'Days'), ...boxes.map(([, , label]) => label)),
        labelled('From', start),
        labelled('To', end),
      );
      return () => ({
        days: boxes.filter(([, box]) => box.checked).map(([day]) => day),
        start: start.value,
        end: end.value,
      });
    },
    h('p', { class: 'note' }, 'Push and toasts wait until the window ends; the inbox still gets them.'),
    quietNote,
  );

  const digests = new RowList<Digest>(
    'Digests',
    'Add a digest',
    'Digest',
    (value, row) => {
      const key = patternControls(row, value);
      const windows: [string, string][] = WINDOWS.map(([secs, text]) => [
        String(secs),
        `${text} after the first`,
      ]);
      if (value?.window_secs !== undefined && !WINDOWS.some(([secs]) => secs === value.window_secs))
        windows.push([String(value.window_secs), `${value.window_secs} seconds after the first`]);
      const when = select(
        [...windows, ['at', 'Daily at a time']],
        value?.at !== undefined ? 'at' : String(value?.window_secs ?? 3600),
      );
      const at = input('time', value?.at ?? '09:00');
      const atLabel = labelled('At', at);
      const show = () => {
        atLabel.hidden = when.value !== 'at';
      };
      when.addEventListener('change', show);
      show();
      row.append(labelled('Send', when), atLabel);
      return () => ({
        ...key.read(),
        ...(when.value === 'at' ? { at: at.value } : { window_secs: Number(when.value) }),
      });
    },
    h('p', { class: 'note' }, 'Batch what matches into one notification; the first matching choice applies.'),
  );

  const rules = new RowList<Rule>(
    'Channels',
    'Add a channel rule',
    'Channel rule',
    (value, row) => {
      const key = patternControls(row, value);
      const channels = CHANNELS.map(([channel, text]) => {
        const set = value?.channels[channel];
        const choice = select(
          [
            ['', 'Default'],
            ['on', 'On'],
            ['off', 'Off'],
          ],
          set === undefined ? '' : set ? 'on' : 'off',
        );
        row.append(labelled(text, choice));
        return [channel, choice] as const;
      });
      const required = h('p', { class: 'note' });
      const explain = () => {
        const kind = key.kind.value as 'event_type' | 'category';
        const match = defaults?.rules.find(
          (rule) => rule.required && rule[kind] !== undefined && within(key.pattern.value.trim(), rule[kind]),
        );
        required.textContent = match
          ? `Required by the service (${match[kind]}): it cannot be turned off.`
          : '';
        required.hidden = !match;
      };
      key.kind.addEventListener('change', explain);
      key.pattern.addEventListener('input', explain);
      explain();
      row.append(required);
      return () => ({
        ...key.read(),
        channels: Object.fromEntries(
          channels
            .filter(([, choice]) => choice.value)
            .map(([channel, choice]) => [channel, choice.value === 'on']),
        ),
      });
    },
    h(
      'p',
      { class: 'note' },
      'Turn channels on or off for an event type or category; Default leaves it to the service.',
    ),
  );

  const serviceList = h('ul');
  const service = h(
    'fieldset',
    {},
    h('legend', {}, 'Set by the service'),
    h(
      'p',
      { class: 'note' },
      'These apply unless your own choices above say otherwise; required ones always apply.',
    ),
    serviceList,
  );
  const save = h('button', { type: 'submit', class: 'save' }, 'Save');
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const error = h('div', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { 'aria-label': 'Notification settings', novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Time zone'), labelled('Your time zone', timeZone)),
    quiet.section,
    digests.section,
    rules.section,
    service,
    error,
    h('div', { class: 'bar' }, save, status),
  );

  const describeDefault = (rule: PreferenceDefaults['rules'][number]): string => {
    const parts = [
      rule.required ? 'required' : '',
      ...CHANNELS.filter(([channel]) => rule.channels[channel] !== undefined).map(
        ([channel, text]) => `${text} ${rule.channels[channel] ? 'on' : 'off'}`,
      ),
      rule.throttle ? `at most ${rule.throttle.limit} per ${rule.throttle.window_secs} s` : '',
      rule.digest
        ? `digest ${rule.digest.at === undefined ? `every ${rule.digest.window_secs} s` : `daily at ${rule.digest.at}`}`
        : '',
      rule.fallback
        ? `then ${rule.fallback.map((step) => `${step.channel} after ${step.after_secs} s`).join(', ')}`
        : '',
    ].filter(Boolean);
    const key = rule.category !== undefined ? `Category ${rule.category}` : `Event type ${rule.event_type}`;
    return `${key}: ${parts.join(', ') || 'no change'}`;
  };

  const show = (preferences: Preferences): void => {
    stored = preferences;
    defaults = preferences.defaults;
    const zone = preferences.time_zone ?? browserZone;
    timeZone.replaceChildren(
      ...(zones.includes(zone) ? zones : [zone, ...zones]).map((name) => h('option', { value: name }, name)),
    );
    timeZone.value = zone;
    quiet.set(preferences.quiet_hours?.windows ?? []);
    digests.set(preferences.digests);
    rules.set(preferences.rules);
    const passes = [
      defaults.quiet_hours.urgent ? 'urgent notifications' : '',
      defaults.quiet_hours.required ? 'required types' : '',
    ].filter(Boolean);
    quietNote.textContent = passes.length ? `Set by the service: ${passes.join(' and ')} come through.` : '';
    quietNote.hidden = passes.length === 0;
    serviceList.replaceChildren(...defaults.rules.map((rule) => h('li', {}, describeDefault(rule))));
    service.hidden = defaults.rules.length === 0;
  };

  /** The row a refused field names (`rules[2].event_type` → the third channel rule), marked invalid. */
  const markInvalid = (field: string): string => {
    const match = /^(rules|digests|quiet_hours\.windows)\[(\d+)\]/.exec(field);
    const list = match ? { rules, digests, 'quiet_hours.windows': quiet }[match[1] as 'rules'] : undefined;
    const row = list?.rows[Number(match?.[2])]?.node;
    if (row) {
      for (const control of row.querySelectorAll('input:not([type=checkbox]), select'))
        control.setAttribute('aria-invalid', 'true');
      return row.querySelector('legend')?.textContent ?? field;
    }
    if (field === 'time_zone') timeZone.setAttribute('aria-invalid', 'true');
    return field;
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!api || !stored || save.disabled) return;
    for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
    error.replaceChildren();
    status.textContent = 'Saving…';
    save.disabled = true;
    const windows = quiet.rows.map((row) => row.read());
    const body: PreferencesRequest = {
      rules: rules.rows.map((row) => row.read()),
      muted_topics: stored.muted_topics,
      time_zone: timeZone.value,
      quiet_hours: windows.length ? { windows } : null,
      digests: digests.rows.map((row) => row.read()),
    };
    try {
      show(await api.setPreferences(body));
      status.textContent = 'Saved.';
    } catch (failure) {
      // The form keeps what the user entered: only the message and the refused rows change.
      status.textContent = '';
      // Read, not instanceof: a page may load the elements and the SDK as two bundles, each with its own class.
      const details = (failure as Partial<NotifyError>).details ?? [];
      error.append(
        h('p', {}, `Not saved: ${(failure as Error).message}`),
        ...(details.length
          ? [
              h(
                'ul',
                {},
                ...details.map((detail) => h('li', {}, `${markInvalid(detail.field)}: ${detail.issue}`)),
              ),
            ]
          : []),
      );
      onError(failure);
    } finally {
      save.disabled = false;
    }
  });

  return {
    node: form,
    async load(next) {
      api = next;
      error.replaceChildren();
      status.textContent = 'Loading…';
      try {
        show(await next.getPreferences());
        status.textContent = '';
      } catch (failure) {
        status.textContent = '';
        error.append(h('p', {}, `Could not load your settings: ${(failure as Error).message}`));
        onError(failure);
      }
    },
  };
};

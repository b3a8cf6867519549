import type { Notify } from '@notify/client';
import { mount } from 'svelte';
import Inbox from './Inbox.svelte';

export const mountInbox = (target: HTMLElement, notify: Notify) =>
  mount(Inbox, { target, props: { notify } });

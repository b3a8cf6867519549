import type { Notify } from '@notify/client';
import { createApp, onScopeDispose, shallowRef } from 'vue';

/** A composable: the inbox snapshot as a ref, updated from the store's subscribe. */
export const useInbox = (notify: Notify) => {
  const inbox = shallowRef(notify.inbox.getSnapshot());
  onScopeDispose(notify.inbox.subscribe((snapshot) => (inbox.value = snapshot)));
  return inbox;
};

export const mountInbox = (target: HTMLElement, notify: Notify) => {
  const app = createApp({
    setup: () => ({ inbox: useInbox(notify), markRead: (id: string) => notify.inbox.markRead(id) }),
    template: `
      <header>My app <notify-bell></notify-bell></header>
      <p class="unread">{{ inbox.unreadCount }} unread</p>
      <ul>
        <li v-for="item in inbox.items" :key="item.id" :data-read="item.read_at !== null">
          {{ item.title }}
          <button v-if="item.read_at === null" type="button" @click="markRead(item.id)">
            Mark read: {{ item.title }}
          </button>
        </li>
      </ul>`,
  });
  // The notify-* tags are custom elements, not Vue components (in a Vite build: vue({ template: { compilerOptions } })).
  app.config.compilerOptions.isCustomElement = (tag) => tag.startsWith('notify-');
  return app.mount(target);
};

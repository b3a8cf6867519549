import type { Notify } from '@notify/client';
import { useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'notify-bell': React.HTMLAttributes<HTMLElement> & { count?: 'unread' | 'unseen' };
      'notify-inbox': React.HTMLAttributes<HTMLElement>;
      'notify-toasts': React.HTMLAttributes<HTMLElement>;
      'notify-settings': React.HTMLAttributes<HTMLElement>;
    }
  }
}

export function Inbox({ notify }: { notify: Notify }) {
  const inbox = useSyncExternalStore(notify.inbox.subscribe, notify.inbox.getSnapshot);
  return (
    <>
      <header>
        My app <notify-bell />
      </header>
      <p className="unread">{inbox.unreadCount} unread</p>
      <ul>
        {inbox.items.map((item) => (
          <li key={item.id} data-read={item.read_at !== null}>
            {item.title}
            {item.read_at === null && (
              <button type="button" onClick={() => notify.inbox.markRead(item.id)}>
                Mark read: {item.title}
              </button>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

export const mountInbox = (target: HTMLElement, notify: Notify) =>
  createRoot(target).render(<Inbox notify={notify} />);

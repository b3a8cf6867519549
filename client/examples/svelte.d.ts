// Svelte components, for the type checker (the test compiles them with svelte/compiler).
declare module '*.svelte' {
  import type { Component } from 'svelte';

  const component: Component<{ notify: import('@notify/client').Notify }>;
  export default component;
}

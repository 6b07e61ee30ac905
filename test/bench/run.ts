/** `npm run bench`: every benchmark in turn (each prints its figures beside its baseline). */
await import('./scan.ts');

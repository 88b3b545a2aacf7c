// Renders the Marketplace icon (128 px PNG, which the Marketplace and Open VSX require) from the
// activity-bar SVG: `node scripts/render-icon.mjs` writes resources/icon.png (committed).
import { readFileSync, writeFileSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';

const svg = readFileSync('resources/whale.svg', 'utf8')
  // The activity-bar icon is drawn in currentColor (VS Code tints it); the Marketplace shows it on
  // the gallery banner's dark blue, so it is drawn white on a rounded tile of that colour.
  .replaceAll('currentColor', '#ffffff');
const inner = Buffer.from(new Resvg(svg, { fitTo: { mode: 'width', value: 96 } }).render().asPng()).toString('base64');
const tile = `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128"><rect width="128" height="128" rx="24" fill="#0b3d5c"/><image x="16" y="16" width="96" height="96" href="data:image/png;base64,${inner}"/></svg>`;
writeFileSync('resources/icon.png', new Resvg(tile, { fitTo: { mode: 'width', value: 128 } }).render().asPng());
console.log('wrote resources/icon.png (128x128)');

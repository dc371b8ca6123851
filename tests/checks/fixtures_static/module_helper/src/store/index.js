export { load, save } from './local.js';

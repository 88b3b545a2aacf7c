/**
 * The closed vocabulary of the toy domains. Every entity name and value a task or a pretraining
 * transcript can contain is listed here, so the embedded tokenizer can make each a single token
 * (REFERENCE §5: names never seen in pretraining cannot be copied).
 *
 * FROZEN: the shipped base model's vocabulary is built from these lists (via corpus.requiredWords()).
 * Appending is safe for a newly pretrained model; reordering or removing breaks shipped weights.
 */

/** 300 invented single-token names (capitalised, never an English word or a value). */
export const NAMES: readonly string[] = [
  'Lodos', 'Perur', 'Ravor', 'Setas', 'Getux', 'Dite', 'Kuvin', 'Taden', 'Muno', 'Luves', 'Todi', 'Resen',
  'Lizi', 'Gasa', 'Hikun', 'Nuro', 'Nino', 'Mukix', 'Pason', 'Tolox', 'Marox', 'Nobu', 'Gitex', 'Gumi',
  'Hovox', 'Nula', 'Moson', 'Pusas', 'Gomer', 'Keke', 'Nusir', 'Teni', 'Vebon', 'Dadar', 'Rolen', 'Vedun',
  'Zekix', 'Golu', 'Monor', 'Hata', 'Mimos', 'Nemis', 'Huzon', 'Vebin', 'Zubin', 'Fulur', 'Zonox', 'Horos',
  'Dutas', 'Hutus', 'Vedex', 'Selur', 'Rokur', 'Seda', 'Kina', 'Puka', 'Sisi', 'Tiso', 'Diron', 'Buto',
  'Fozin', 'Zonos', 'Mose', 'Bavi', 'Bazus', 'Zosux', 'Podon', 'Rivi', 'Radun', 'Lazis', 'Zote', 'Rabun',
  'Toka', 'Nisa', 'Gada', 'Tanu', 'Roma', 'Fovo', 'Meta', 'Hemi', 'Bubix', 'Tabex', 'Seze', 'Konin',
  'Pibix', 'Suli', 'Nenun', 'Luzin', 'Lurux', 'Zaro', 'Mave', 'Fudar', 'Hukun', 'Giker', 'Mosox', 'Gibus',
  'Sunos', 'Budan', 'Kamis', 'Sibu', 'Nale', 'Fezix', 'Lubon', 'Letu', 'Belu', 'Fitus', 'Tatas', 'Sarix',
  'Pevex', 'Putax', 'Zola', 'Fever', 'Gerin', 'Likex', 'Redor', 'Moben', 'Zutar', 'Mizux', 'Budor', 'Volex',
  'Posen', 'Ruren', 'Vuti', 'Zoni', 'Ruzer', 'Sakis', 'Lanin', 'Gizar', 'Tasur', 'Selen', 'Ludu', 'Vonos',
  'Zume', 'Dater', 'Kolos', 'Zesi', 'Buson', 'Vuvos', 'Votu', 'Binas', 'Gatex', 'Diman', 'Raki', 'Mona',
  'Nine', 'Hivas', 'Ziras', 'Bube', 'Valo', 'Nodox', 'Diras', 'Muta', 'Kudir', 'Rotus', 'Bida', 'Barir',
  'Tise', 'Salar', 'Veba', 'Vikis', 'Tizes', 'Hami', 'Rukix', 'Ketes', 'Kokox', 'Gabi', 'Zoze', 'Fozus',
  'Gomor', 'Bitin', 'Vela', 'Satox', 'Peba', 'Fanin', 'Sesi', 'Denax', 'Gubax', 'Pikur', 'Zurur', 'Sobi',
  'Parex', 'Firox', 'Venes', 'Nuti', 'Kobo', 'Zurar', 'Zanos', 'Gukos', 'Ronos', 'Bosin', 'Vomo', 'Gevi',
  'Parux', 'Melur', 'Mimor', 'Ninax', 'Kezi', 'Kori', 'Muron', 'Noke', 'Kune', 'Vebus', 'Tumas', 'Visi',
  'Tiro', 'Dakun', 'Tazin', 'Bibe', 'Fizo', 'Ranu', 'Gelox', 'Huzun', 'Homix', 'Moma', 'Lolox', 'Bonux',
  'Naman', 'Pure', 'Mezon', 'Lamax', 'Varux', 'Huto', 'Deze', 'Malus', 'Tebi', 'Zuti', 'Baban', 'Sasas',
  'Vura', 'Luso', 'Hani', 'Vakin', 'Radis', 'Pazu', 'Panex', 'Bozen', 'Pazer', 'Puzan', 'Molos', 'Siki',
  'Vuser', 'Farur', 'Teta', 'Batas', 'Fabor', 'Gutar', 'Fasas', 'Kazan', 'Fazur', 'Mimis', 'Bane', 'Genan',
  'Pavax', 'Zever', 'Fatus', 'Vuma', 'Zusax', 'Kezur', 'Zose', 'Zanan', 'Lesar', 'Himas', 'Liman', 'Hoza',
  'Rize', 'Taku', 'Lutar', 'Daron', 'Lazar', 'Rumi', 'Retar', 'Pumis', 'Tuson', 'Mobar', 'Sosos', 'Levor',
  'Setor', 'Leku', 'Zitas', 'Teva', 'Zolon', 'Galan', 'Gesur', 'Sanu', 'Lasos', 'Kuvur', 'Ronis', 'Lokir',
  'Nilun', 'Voton', 'Bade', 'Redos', 'Memu', 'Pilon', 'Zates', 'Dome', 'Folix', 'Kuler', 'Guma', 'Deven',
];

/** Value-valued attributes and their values (12 each): the answers of both domains. */
export const VALUE_ATTRIBUTES = ['pet', 'city', 'color', 'job'] as const;
export type ValueAttribute = (typeof VALUE_ATTRIBUTES)[number];

/** Entity-valued attributes: the first hop of a 2-hop question. */
export const ENTITY_ATTRIBUTES = ['friend', 'boss'] as const;
export type EntityAttribute = (typeof ENTITY_ATTRIBUTES)[number];

export const ATTRIBUTES: readonly string[] = [...VALUE_ATTRIBUTES, ...ENTITY_ATTRIBUTES];

export const VALUES: Readonly<Record<ValueAttribute, readonly string[]>> = {
  pet: ['eel', 'cat', 'dog', 'owl', 'fox', 'yak', 'emu', 'bat', 'ant', 'bee', 'cod', 'elk'],
  city: ['Oslo', 'Lima', 'Rome', 'Cairo', 'Delhi', 'Tokyo', 'Paris', 'Quito', 'Dakar', 'Hanoi', 'Perth', 'Sofia'],
  color: ['red', 'blue', 'green', 'pink', 'gray', 'gold', 'teal', 'tan', 'navy', 'lime', 'plum', 'rust'],
  job: ['baker', 'smith', 'nurse', 'pilot', 'judge', 'miner', 'tailor', 'farmer', 'poet', 'chef', 'clerk', 'guard'],
};

export const ALL_VALUES: readonly string[] = VALUE_ATTRIBUTES.flatMap((a) => VALUES[a]);

/** Filler words of the rambling expert (never a name, a value, an attribute or an action word). */
export const FILLER: readonly string[] = [
  'hmm', 'well', 'let', 'me', 'think', 'about', 'this', 'so', 'maybe', 'it', 'could', 'be', 'wait', 'and',
  'then', 'again', 'okay', 'i', 'am', 'not', 'sure', 'yes', 'right', 'first', 'look', 'at', 'check', 'thing',
];

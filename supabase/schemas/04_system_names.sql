-- System names: unique per account, compared as a person sees them (spec section 2, "System name"),
-- so two kiosks racing for one name can never both win, and a dashboard edit cannot break the rule.
-- A stored name is in one form, cadence.system_name_form (what renders as nothing removed, NFC,
-- trimmed), and shows something (cadence.system_name_shows); the trigger refuses any other from any
-- writer. Two names are one when they look alike (issue 59, "one name per look"): when their keys
-- are equal, the key in small letters (NFKC, case folded, spaces collapsed, letters of another
-- script read as their look-alikes) or the key in capitals (the same read in capitals, where
-- Cyrillic `В` is Latin `B`), both given by cadence.system_name_keys. The trigger stores both keys
-- on the key's row, and each has a unique index grouping keys by the account they belong to
-- (license_keys.belongs_to), so the indexes alone decide uniqueness, for a linked and an unlinked
-- key of one account alike; cadence.set_system_names checks each name through them (an index probe
-- per key, whatever the size of the fleet).

-- PL/pgSQL, as the keys' and look-alikes' functions: a session plans its expression once, where a
-- SQL function that pins search_path (so it is never inlined) is parsed and planned again in each
-- transaction that calls it, and runs an executor of its own at each call: system_name_shows' plan
-- alone cost a one-name write about 0.1 ms.
CREATE FUNCTION cadence.system_name_form(p_name text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.btrim(
    pg_catalog.normalize(
      pg_catalog.regexp_replace(
        p_name,
        '[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5'
        '\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0'
        '\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d159'
        '\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
        '', 'g'),
      'NFC'),
    -- What JavaScript's String.prototype.trim removes (U+FEFF, also whitespace there, is removed above).
    U&'\0009\000A\000B\000C\000D\0020\00A0\1680\2000\2001\2002\2003\2004\2005\2006\2007\2008\2009\200A\2028\2029\202F\205F\3000');
end
$$;

COMMENT ON FUNCTION cadence.system_name_form(p_name text) IS 'The form a system name is stored and compared in: characters that render as nothing removed (Unicode Cf and Default_Ignorable_Code_Point, U+2800, U+1D159), NFC, trimmed. Empty means no name.';

CREATE FUNCTION cadence.system_name_shows(p_name text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
begin
  return p_name !~
      '[\u0001-\u001f\u007f-\u009f\u0378\u0379\u0380-\u0383\u038b\u038d\u03a2\u0530\u0557\u0558'
      '\u058b\u058c\u0590\u05c8-\u05cf\u05eb-\u05ee\u05f5-\u05ff\u070e\u074b\u074c\u07b2-\u07bf'
      '\u07fb\u07fc\u082e\u082f\u083f\u085c\u085d\u085f\u086b-\u086f\u0892-\u0896\u0984\u098d\u098e'
      '\u0991\u0992\u09a9\u09b1\u09b3-\u09b5\u09ba\u09bb\u09c5\u09c6\u09c9\u09ca\u09cf-\u09d6'
      '\u09d8-\u09db\u09de\u09e4\u09e5\u09ff\u0a00\u0a04\u0a0b-\u0a0e\u0a11\u0a12\u0a29\u0a31\u0a34'
      '\u0a37\u0a3a\u0a3b\u0a3d\u0a43-\u0a46\u0a49\u0a4a\u0a4e-\u0a50\u0a52-\u0a58\u0a5d'
      '\u0a5f-\u0a65\u0a77-\u0a80\u0a84\u0a8e\u0a92\u0aa9\u0ab1\u0ab4\u0aba\u0abb\u0ac6\u0aca'
      '\u0ace\u0acf\u0ad1-\u0adf\u0ae4\u0ae5\u0af2-\u0af8\u0b00\u0b04\u0b0d\u0b0e\u0b11\u0b12\u0b29'
      '\u0b31\u0b34\u0b3a\u0b3b\u0b45\u0b46\u0b49\u0b4a\u0b4e-\u0b54\u0b58-\u0b5b\u0b5e\u0b64\u0b65'
      '\u0b78-\u0b81\u0b84\u0b8b-\u0b8d\u0b91\u0b96-\u0b98\u0b9b\u0b9d\u0ba0-\u0ba2\u0ba5-\u0ba7'
      '\u0bab-\u0bad\u0bba-\u0bbd\u0bc3-\u0bc5\u0bc9\u0bce\u0bcf\u0bd1-\u0bd6\u0bd8-\u0be5'
      '\u0bfb-\u0bff\u0c0d\u0c11\u0c29\u0c3a\u0c3b\u0c45\u0c49\u0c4e-\u0c54\u0c57\u0c5b\u0c5e\u0c5f'
      '\u0c64\u0c65\u0c70-\u0c76\u0c8d\u0c91\u0ca9\u0cb4\u0cba\u0cbb\u0cc5\u0cc9\u0cce-\u0cd4'
      '\u0cd7-\u0cdb\u0cdf\u0ce4\u0ce5\u0cf0\u0cf4-\u0cff\u0d0d\u0d11\u0d45\u0d49\u0d50-\u0d53'
      '\u0d64\u0d65\u0d80\u0d84\u0d97-\u0d99\u0db2\u0dbc\u0dbe\u0dbf\u0dc7-\u0dc9\u0dcb-\u0dce'
      '\u0dd5\u0dd7\u0de0-\u0de5\u0df0\u0df1\u0df5-\u0e00\u0e3b-\u0e3e\u0e5c-\u0e80\u0e83\u0e85'
      '\u0e8b\u0ea4\u0ea6\u0ebe\u0ebf\u0ec5\u0ec7\u0ecf\u0eda\u0edb\u0ee0-\u0eff\u0f48\u0f6d-\u0f70'
      '\u0f98\u0fbd\u0fcd\u0fdb-\u0fff\u10c6\u10c8-\u10cc\u10ce\u10cf\u1249\u124e\u124f\u1257\u1259'
      '\u125e\u125f\u1289\u128e\u128f\u12b1\u12b6\u12b7\u12bf\u12c1\u12c6\u12c7\u12d7\u1311'
      '\u1316\u1317\u135b\u135c\u137d-\u137f\u139a-\u139f\u13f6\u13f7\u13fe\u13ff\u169d-\u169f'
      '\u16f9-\u16ff\u1716-\u171e\u1737-\u173f\u1754-\u175f\u176d\u1771\u1774-\u177f\u17de\u17df'
      '\u17ea-\u17ef\u17fa-\u17ff\u181a-\u181f\u1879-\u187f\u18ab-\u18af\u18f6-\u18ff\u191f'
      '\u192c-\u192f\u193c-\u193f\u1941-\u1943\u196e\u196f\u1975-\u197f\u19ac-\u19af\u19ca-\u19cf'
      '\u19db-\u19dd\u1a1c\u1a1d\u1a5f\u1a7d\u1a7e\u1a8a-\u1a8f\u1a9a-\u1a9f\u1aae\u1aaf'
      '\u1ade\u1adf\u1aec-\u1aff\u1b4d\u1bf4-\u1bfb\u1c38-\u1c3a\u1c4a-\u1c4c\u1c8b-\u1c8f'
      '\u1cbb\u1cbc\u1cc8-\u1ccf\u1cfb-\u1cff\u1f16\u1f17\u1f1e\u1f1f\u1f46\u1f47\u1f4e\u1f4f\u1f58'
      '\u1f5a\u1f5c\u1f5e\u1f7e\u1f7f\u1fb5\u1fc5\u1fd4\u1fd5\u1fdc\u1ff0\u1ff1\u1ff5\u1fff'
      '\u2028\u2029\u2065\u2072\u2073\u208f\u209d-\u209f\u20c2-\u20cf\u20f1-\u20ff\u218c-\u218f'
      '\u242a-\u243f\u244b-\u245f\u2b74\u2b75\u2cf4-\u2cf8\u2d26\u2d28-\u2d2c\u2d2e\u2d2f'
      '\u2d68-\u2d6e\u2d71-\u2d7e\u2d97-\u2d9f\u2da7\u2daf\u2db7\u2dbf\u2dc7\u2dcf\u2dd7\u2ddf'
      '\u2e5e-\u2e7f\u2e9a\u2ef4-\u2eff\u2fd6-\u2fef\u3040\u3097\u3098\u3100-\u3104\u3130\u318f'
      '\u31e6-\u31ee\u321f\ua48d-\ua48f\ua4c7-\ua4cf\ua62c-\ua63f\ua6f8-\ua6ff\ua7dd-\ua7f0'
      '\ua82d-\ua82f\ua83a-\ua83f\ua878-\ua87f\ua8c6-\ua8cd\ua8da-\ua8df\ua954-\ua95e\ua97d-\ua97f'
      '\ua9ce\ua9da-\ua9dd\ua9ff\uaa37-\uaa3f\uaa4e\uaa4f\uaa5a\uaa5b\uaac3-\uaada\uaaf7-\uab00'
      '\uab07\uab08\uab0f\uab10\uab17-\uab1f\uab27\uab2f\uab6c-\uab6f\uabee\uabef\uabfa-\uabff'
      '\ud7a4-\ud7af\ud7c7-\ud7ca\ud7fc-\ud7ff\ue000-\uf8ff\ufa6e\ufa6f\ufada-\ufaff\ufb07-\ufb12'
      '\ufb18-\ufb1c\ufb37\ufb3d\ufb3f\ufb42\ufb45\ufdd0-\ufdef\ufe1a-\ufe1f\ufe53\ufe67'
      '\ufe6c-\ufe6f\ufe75\ufefd\ufefe\uff00\uffbf-\uffc1\uffc8\uffc9\uffd0\uffd1\uffd8\uffd9'
      '\uffdd-\uffdf\uffe7\uffef-\ufff8\ufffc-\uffff\U0001000c\U00010027\U0001003b\U0001003e'
      '\U0001004e\U0001004f\U0001005e-\U0001007f\U000100fb-\U000100ff\U00010103-\U00010106'
      '\U00010134-\U00010136\U0001018f\U0001019d-\U0001019f\U000101a1-\U000101cf'
      '\U000101fe-\U0001027f\U0001029d-\U0001029f\U000102d1-\U000102df\U000102fc-\U000102ff'
      '\U00010324-\U0001032c\U0001034b-\U0001034f\U0001037b-\U0001037f\U0001039e'
      '\U000103c4-\U000103c7\U000103d6-\U000103ff\U0001049e\U0001049f\U000104aa-\U000104af'
      '\U000104d4-\U000104d7\U000104fc-\U000104ff\U00010528-\U0001052f\U00010564-\U0001056e'
      '\U0001057b\U0001058b\U00010593\U00010596\U000105a2\U000105b2\U000105ba\U000105bd-\U000105bf'
      '\U000105f4-\U000105ff\U00010737-\U0001073f\U00010756-\U0001075f\U00010768-\U0001077f'
      '\U00010786\U000107b1\U000107bb-\U000107ff\U00010806\U00010807\U00010809\U00010836'
      '\U00010839-\U0001083b\U0001083d\U0001083e\U00010856\U0001089f-\U000108a6'
      '\U000108b0-\U000108df\U000108f3\U000108f6-\U000108fa\U0001091c-\U0001091e'
      '\U0001093a-\U0001093e\U0001095a-\U0001097f\U000109b8-\U000109bb\U000109d0\U000109d1'
      '\U00010a04\U00010a07-\U00010a0b\U00010a14\U00010a18\U00010a36\U00010a37\U00010a3b-\U00010a3e'
      '\U00010a49-\U00010a4f\U00010a59-\U00010a5f\U00010aa0-\U00010abf\U00010ae7-\U00010aea'
      '\U00010af7-\U00010aff\U00010b36-\U00010b38\U00010b56\U00010b57\U00010b73-\U00010b77'
      '\U00010b92-\U00010b98\U00010b9d-\U00010ba8\U00010bb0-\U00010bff\U00010c49-\U00010c7f'
      '\U00010cb3-\U00010cbf\U00010cf3-\U00010cf9\U00010d28-\U00010d2f\U00010d3a-\U00010d3f'
      '\U00010d66-\U00010d68\U00010d86-\U00010d8d\U00010d90-\U00010e5f\U00010e7f\U00010eaa'
      '\U00010eae\U00010eaf\U00010eb2-\U00010ec1\U00010ec8-\U00010ecf\U00010ed9-\U00010ef9'
      '\U00010f28-\U00010f2f\U00010f5a-\U00010f6f\U00010f8a-\U00010faf\U00010fcc-\U00010fdf'
      '\U00010ff7-\U00010fff\U0001104e-\U00011051\U00011076-\U0001107e\U000110c3-\U000110cc'
      '\U000110ce\U000110cf\U000110e9-\U000110ef\U000110fa-\U000110ff\U00011135'
      '\U00011148-\U0001114f\U00011177-\U0001117f\U000111e0\U000111f5-\U000111ff\U00011212'
      '\U00011242-\U0001127f\U00011287\U00011289\U0001128e\U0001129e\U000112aa-\U000112af'
      '\U000112eb-\U000112ef\U000112fa-\U000112ff\U00011304\U0001130d\U0001130e\U00011311\U00011312'
      '\U00011329\U00011331\U00011334\U0001133a\U00011345\U00011346\U00011349\U0001134a'
      '\U0001134e\U0001134f\U00011351-\U00011356\U00011358-\U0001135c\U00011364\U00011365'
      '\U0001136d-\U0001136f\U00011375-\U0001137f\U0001138a\U0001138c\U0001138d\U0001138f\U000113b6'
      '\U000113c1\U000113c3\U000113c4\U000113c6\U000113cb\U000113d6\U000113d9-\U000113e0'
      '\U000113e3-\U000113ff\U0001145c\U00011462-\U0001147f\U000114c8-\U000114cf'
      '\U000114da-\U0001157f\U000115b6\U000115b7\U000115de-\U000115ff\U00011645-\U0001164f'
      '\U0001165a-\U0001165f\U0001166d-\U0001167f\U000116ba-\U000116bf\U000116ca-\U000116cf'
      '\U000116e4-\U000116ff\U0001171b\U0001171c\U0001172c-\U0001172f\U00011747-\U000117ff'
      '\U0001183c-\U0001189f\U000118f3-\U000118fe\U00011907\U00011908\U0001190a\U0001190b\U00011914'
      '\U00011917\U00011936\U00011939\U0001193a\U00011947-\U0001194f\U0001195a-\U0001199f'
      '\U000119a8\U000119a9\U000119d8\U000119d9\U000119e5-\U000119ff\U00011a48-\U00011a4f'
      '\U00011aa3-\U00011aaf\U00011af9-\U00011aff\U00011b0a-\U00011b5f\U00011b68-\U00011bbf'
      '\U00011be2-\U00011bef\U00011bfa-\U00011bff\U00011c09\U00011c37\U00011c46-\U00011c4f'
      '\U00011c6d-\U00011c6f\U00011c90\U00011c91\U00011ca8\U00011cb7-\U00011cff\U00011d07\U00011d0a'
      '\U00011d37-\U00011d39\U00011d3b\U00011d3e\U00011d48-\U00011d4f\U00011d5a-\U00011d5f'
      '\U00011d66\U00011d69\U00011d8f\U00011d92\U00011d99-\U00011d9f\U00011daa-\U00011daf'
      '\U00011ddc-\U00011ddf\U00011dea-\U00011edf\U00011ef9-\U00011eff\U00011f11'
      '\U00011f3b-\U00011f3d\U00011f5b-\U00011faf\U00011fb1-\U00011fbf\U00011ff2-\U00011ffe'
      '\U0001239a-\U000123ff\U0001246f\U00012475-\U0001247f\U00012544-\U00012f8f'
      '\U00012ff3-\U00012fff\U00013456-\U0001345f\U000143fb-\U000143ff\U00014647-\U000160ff'
      '\U0001613a-\U000167ff\U00016a39-\U00016a3f\U00016a5f\U00016a6a-\U00016a6d\U00016abf'
      '\U00016aca-\U00016acf\U00016aee\U00016aef\U00016af6-\U00016aff\U00016b46-\U00016b4f'
      '\U00016b5a\U00016b62\U00016b78-\U00016b7c\U00016b90-\U00016d3f\U00016d7a-\U00016e3f'
      '\U00016e9b-\U00016e9f\U00016eb9\U00016eba\U00016ed4-\U00016eff\U00016f4b-\U00016f4e'
      '\U00016f88-\U00016f8e\U00016fa0-\U00016fdf\U00016fe5-\U00016fef\U00016ff7-\U00016fff'
      '\U00018cd6-\U00018cfe\U00018d1f-\U00018d7f\U00018df3-\U0001afef\U0001aff4\U0001affc'
      '\U0001afff\U0001b123-\U0001b131\U0001b133-\U0001b14f\U0001b153\U0001b154'
      '\U0001b156-\U0001b163\U0001b168-\U0001b16f\U0001b2fc-\U0001bbff\U0001bc6b-\U0001bc6f'
      '\U0001bc7d-\U0001bc7f\U0001bc89-\U0001bc8f\U0001bc9a\U0001bc9b\U0001bca4-\U0001cbff'
      '\U0001ccfd-\U0001ccff\U0001ceb4-\U0001ceb9\U0001ced1-\U0001cedf\U0001cef1-\U0001ceff'
      '\U0001cf2e\U0001cf2f\U0001cf47-\U0001cf4f\U0001cfc4-\U0001cfff\U0001d0f6-\U0001d0ff'
      '\U0001d127\U0001d128\U0001d1eb-\U0001d1ff\U0001d246-\U0001d2bf\U0001d2d4-\U0001d2df'
      '\U0001d2f4-\U0001d2ff\U0001d357-\U0001d35f\U0001d379-\U0001d3ff\U0001d455\U0001d49d'
      '\U0001d4a0\U0001d4a1\U0001d4a3\U0001d4a4\U0001d4a7\U0001d4a8\U0001d4ad\U0001d4ba\U0001d4bc'
      '\U0001d4c4\U0001d506\U0001d50b\U0001d50c\U0001d515\U0001d51d\U0001d53a\U0001d53f\U0001d545'
      '\U0001d547-\U0001d549\U0001d551\U0001d6a6\U0001d6a7\U0001d7cc\U0001d7cd\U0001da8c-\U0001da9a'
      '\U0001daa0\U0001dab0-\U0001deff\U0001df1f-\U0001df24\U0001df2b-\U0001dfff\U0001e007'
      '\U0001e019\U0001e01a\U0001e022\U0001e025\U0001e02b-\U0001e02f\U0001e06e-\U0001e08e'
      '\U0001e090-\U0001e0ff\U0001e12d-\U0001e12f\U0001e13e\U0001e13f\U0001e14a-\U0001e14d'
      '\U0001e150-\U0001e28f\U0001e2af-\U0001e2bf\U0001e2fa-\U0001e2fe\U0001e300-\U0001e4cf'
      '\U0001e4fa-\U0001e5cf\U0001e5fb-\U0001e5fe\U0001e600-\U0001e6bf\U0001e6df'
      '\U0001e6f6-\U0001e6fd\U0001e700-\U0001e7df\U0001e7e7\U0001e7ec\U0001e7ef\U0001e7ff'
      '\U0001e8c5\U0001e8c6\U0001e8d7-\U0001e8ff\U0001e94c-\U0001e94f\U0001e95a-\U0001e95d'
      '\U0001e960-\U0001ec70\U0001ecb5-\U0001ed00\U0001ed3e-\U0001edff\U0001ee04\U0001ee20'
      '\U0001ee23\U0001ee25\U0001ee26\U0001ee28\U0001ee33\U0001ee38\U0001ee3a\U0001ee3c-\U0001ee41'
      '\U0001ee43-\U0001ee46\U0001ee48\U0001ee4a\U0001ee4c\U0001ee50\U0001ee53\U0001ee55\U0001ee56'
      '\U0001ee58\U0001ee5a\U0001ee5c\U0001ee5e\U0001ee60\U0001ee63\U0001ee65\U0001ee66\U0001ee6b'
      '\U0001ee73\U0001ee78\U0001ee7d\U0001ee7f\U0001ee8a\U0001ee9c-\U0001eea0\U0001eea4\U0001eeaa'
      '\U0001eebc-\U0001eeef\U0001eef2-\U0001efff\U0001f02c-\U0001f02f\U0001f094-\U0001f09f'
      '\U0001f0af\U0001f0b0\U0001f0c0\U0001f0d0\U0001f0f6-\U0001f0ff\U0001f1ae-\U0001f1e5'
      '\U0001f203-\U0001f20f\U0001f23c-\U0001f23f\U0001f249-\U0001f24f\U0001f252-\U0001f25f'
      '\U0001f266-\U0001f2ff\U0001f6d9-\U0001f6db\U0001f6ed-\U0001f6ef\U0001f6fd-\U0001f6ff'
      '\U0001f7da-\U0001f7df\U0001f7ec-\U0001f7ef\U0001f7f1-\U0001f7ff\U0001f80c-\U0001f80f'
      '\U0001f848-\U0001f84f\U0001f85a-\U0001f85f\U0001f888-\U0001f88f\U0001f8ae\U0001f8af'
      '\U0001f8bc-\U0001f8bf\U0001f8c2-\U0001f8cf\U0001f8d9-\U0001f8ff\U0001fa58-\U0001fa5f'
      '\U0001fa6e\U0001fa6f\U0001fa7d-\U0001fa7f\U0001fa8b-\U0001fa8d\U0001fac7'
      '\U0001fac9-\U0001facc\U0001fadd\U0001fade\U0001faeb-\U0001faee\U0001faf9-\U0001faff'
      '\U0001fb93\U0001fbfb-\U0001ffff\U0002a6e0-\U0002a6ff\U0002b81e\U0002b81f\U0002ceae\U0002ceaf'
      '\U0002ebe1-\U0002ebef\U0002ee5e-\U0002f7ff\U0002fa1e-\U0002ffff\U0003134b-\U0003134f'
      '\U0003347a-\U000e0000\U000e0002-\U000e001f\U000e0080-\U000e00ff\U000e01f0-\U0010ffff]'
     -- What is left once nothing that shows is removed: Z, M, Cf, default-ignorables, the blank symbols.
     and pg_catalog.regexp_replace(p_name,
      '[\u0020\u00a0\u00ad\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5'
      '\u05c7\u0600-\u0605\u0610-\u061a\u061c\u064b-\u065f\u0670\u06d6-\u06dd\u06df-\u06e4'
      '\u06e7\u06e8\u06ea-\u06ed\u070f\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3\u07fd'
      '\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0859-\u085b\u0890\u0891\u0897-\u089f'
      '\u08ca-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962\u0963\u0981-\u0983\u09bc'
      '\u09be-\u09c4\u09c7\u09c8\u09cb-\u09cd\u09d7\u09e2\u09e3\u09fe\u0a01-\u0a03\u0a3c'
      '\u0a3e-\u0a42\u0a47\u0a48\u0a4b-\u0a4d\u0a51\u0a70\u0a71\u0a75\u0a81-\u0a83\u0abc'
      '\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c'
      '\u0b3e-\u0b44\u0b47\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62\u0b63\u0b82\u0bbe-\u0bc2'
      '\u0bc6-\u0bc8\u0bca-\u0bcd\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d'
      '\u0c55\u0c56\u0c62\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd'
      '\u0cd5\u0cd6\u0ce2\u0ce3\u0cf3\u0d00-\u0d03\u0d3b\u0d3c\u0d3e-\u0d44\u0d46-\u0d48'
      '\u0d4a-\u0d4d\u0d57\u0d62\u0d63\u0d81-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf'
      '\u0df2\u0df3\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ece\u0f18\u0f19'
      '\u0f35\u0f37\u0f39\u0f3e\u0f3f\u0f71-\u0f84\u0f86\u0f87\u0f8d-\u0f97\u0f99-\u0fbc\u0fc6'
      '\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d'
      '\u108f\u109a-\u109d\u115f\u1160\u135d-\u135f\u1680\u1712-\u1715\u1732-\u1734\u1752\u1753'
      '\u1772\u1773\u17b4-\u17d3\u17dd\u180b-\u180f\u1885\u1886\u18a9\u1920-\u192b\u1930-\u193b'
      '\u1a17-\u1a1b\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1add\u1ae0-\u1aeb\u1b00-\u1b04'
      '\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2'
      '\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9\u1dc0-\u1dff\u2000-\u200f\u2028-\u202f\u205f-\u206f'
      '\u20d0-\u20f0\u2800\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u3000\u302a-\u302f\u3099\u309a\u3164'
      '\ua66f-\ua672\ua674-\ua67d\ua69e\ua69f\ua6f0\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c'
      '\ua880\ua881\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983'
      '\ua9b3-\ua9c0\ua9e5\uaa29-\uaa36\uaa43\uaa4c\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4'
      '\uaab7\uaab8\uaabe\uaabf\uaac1\uaaeb-\uaaef\uaaf5\uaaf6\uabe3-\uabea\uabec\uabed\ufb1e'
      '\ufe00-\ufe0f\ufe20-\ufe2f\ufeff\uffa0\ufff0-\ufffb\U000101fd\U000102e0\U00010376-\U0001037a'
      '\U00010a01-\U00010a03\U00010a05\U00010a06\U00010a0c-\U00010a0f\U00010a38-\U00010a3a'
      '\U00010a3f\U00010ae5\U00010ae6\U00010d24-\U00010d27\U00010d69-\U00010d6d\U00010eab\U00010eac'
      '\U00010efa-\U00010eff\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002'
      '\U00011038-\U00011046\U00011070\U00011073\U00011074\U0001107f-\U00011082'
      '\U000110b0-\U000110ba\U000110bd\U000110c2\U000110cd\U00011100-\U00011102'
      '\U00011127-\U00011134\U00011145\U00011146\U00011173\U00011180-\U00011182'
      '\U000111b3-\U000111c0\U000111c9-\U000111cc\U000111ce\U000111cf\U0001122c-\U00011237'
      '\U0001123e\U00011241\U000112df-\U000112ea\U00011300-\U00011303\U0001133b\U0001133c'
      '\U0001133e-\U00011344\U00011347\U00011348\U0001134b-\U0001134d\U00011357\U00011362\U00011363'
      '\U00011366-\U0001136c\U00011370-\U00011374\U000113b8-\U000113c0\U000113c2\U000113c5'
      '\U000113c7-\U000113ca\U000113cc-\U000113d0\U000113d2\U000113e1\U000113e2'
      '\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5'
      '\U000115b8-\U000115c0\U000115dc\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7'
      '\U0001171d-\U0001172b\U0001182c-\U0001183a\U00011930-\U00011935\U00011937\U00011938'
      '\U0001193b-\U0001193e\U00011940\U00011942\U00011943\U000119d1-\U000119d7'
      '\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a\U00011a33-\U00011a39'
      '\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a5b\U00011a8a-\U00011a99'
      '\U00011b60-\U00011b67\U00011c2f-\U00011c36\U00011c38-\U00011c3f\U00011c92-\U00011ca7'
      '\U00011ca9-\U00011cb6\U00011d31-\U00011d36\U00011d3a\U00011d3c\U00011d3d'
      '\U00011d3f-\U00011d45\U00011d47\U00011d8a-\U00011d8e\U00011d90\U00011d91'
      '\U00011d93-\U00011d97\U00011ef3-\U00011ef6\U00011f00\U00011f01\U00011f03'
      '\U00011f34-\U00011f3a\U00011f3e-\U00011f42\U00011f5a\U00013430-\U00013440'
      '\U00013447-\U00013455\U0001611e-\U0001612f\U00016af0-\U00016af4\U00016b30-\U00016b36'
      '\U00016f4f\U00016f51-\U00016f87\U00016f8f-\U00016f92\U00016fe4\U00016ff0\U00016ff1'
      '\U0001bc9d\U0001bc9e\U0001bca0-\U0001bca3\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46'
      '\U0001d159\U0001d165-\U0001d169\U0001d16d-\U0001d182\U0001d185-\U0001d18b'
      '\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c'
      '\U0001da75\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf\U0001e000-\U0001e006'
      '\U0001e008-\U0001e018\U0001e01b-\U0001e021\U0001e023\U0001e024\U0001e026-\U0001e02a'
      '\U0001e08f\U0001e130-\U0001e136\U0001e2ae\U0001e2ec-\U0001e2ef\U0001e4ec-\U0001e4ef'
      '\U0001e5ee\U0001e5ef\U0001e6e3\U0001e6e6\U0001e6ee\U0001e6ef\U0001e6f5\U0001e8d0-\U0001e8d6'
      '\U0001e944-\U0001e94a\U000e0000-\U000e0fff]',
      '', 'g') <> '';
end
$$;

COMMENT ON FUNCTION cadence.system_name_shows(p_name text) IS 'Whether a system name (in cadence.system_name_form) shows something: no control, private-use, unassigned, noncharacter, U+FFFC, U+FFFD, line or paragraph separator code point, and at least one letter, digit, punctuation or symbol that is not default-ignorable nor a blank symbol (U+2800, U+1D159).';

-- The two keys a name is compared by (issue 59, "one name per look"). Both start from the stored
-- form, then:
-- - NFKD: compatibility characters are their plain letters (fullwidth `Ｌ`, mathematical bold `𝐋`,
--   circled `Ⓛ` are `L`; the ligature `ﬁ` is `fi`; every Unicode space but U+1680 OGHAM SPACE MARK,
--   which draws a line, is U+0020);
-- - runs of spaces are one space;
-- - case folding: the key in small letters (small_key) folds case fully (ICU's root case mappings,
--   the collation "und-x-icu" whatever the database's own: `ß` and `ss` are one, final sigma too);
--   the key in capitals (capitals_key) is the name in capitals;
-- - letters of one script that look like letters of another, where the name also holds a letter of
--   Latin, Greek or Cyrillic other than their own, are read as those (04_system_name_look_alikes.sql,
--   generated from Unicode's confusables.txt): Cyrillic `о` and Greek `ο` in `Lobby` are `o`;
-- - NFKC, so what is compared is composed again.
-- Two keys, because confusables.txt tells look-alikes in one case: Cyrillic `В`, `Н`, `Т` are Latin
-- `B`, `H`, `T` as capitals only (small `в` is a small capital `ʙ`), and Greek `ν` is `v` in small
-- letters only (capital `Ν` is `N`). Names whose keys are equal in either are one name. Look-alikes
-- within one script (`rn` and `m`, `1` and `l`, `0` and `O`) stay apart: honest fleets use them.
-- What stays apart too: a name all in another script (Cyrillic `Рор` is not `Pop`: UTS #39's
-- whole-script confusables, which would also join honest names of that script to each other).
-- One function for both, called once per name written (by the trigger, which stores them on the
-- key) and once per name asked (by cadence.set_system_names' probes): its pinned search_path costs
-- a setting saved and restored per call: two functions, each also computed by an expression
-- index, made a name write 1.20 times slower (test/bench/results.md, 2026-12-07).
-- PL/pgSQL, as the look-alike functions: a session plans each once, where a SQL function called
-- from another function is planned again in each transaction.
CREATE FUNCTION cadence.system_name_keys(p_name text, OUT small_key text, OUT capitals_key text) RETURNS record
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
declare
  v_spaced text;
begin
  -- Printable ASCII, almost every name: its form is it trimmed, NFKD and NFKC leave it, it holds no
  -- letter of another script, and ASCII case is ICU's; the full path below gives the same, slower.
  if p_name ~ '^[\u0020-\u007e]*$' then
    v_spaced := pg_catalog.regexp_replace(pg_catalog.btrim(p_name, ' '), ' {2,}', ' ', 'g');
    small_key := pg_catalog.lower(v_spaced);
    capitals_key := pg_catalog.upper(v_spaced);
    return;
  end if;
  v_spaced := pg_catalog.regexp_replace(pg_catalog.normalize(cadence.system_name_form(p_name), 'NFKD'), ' {2,}', ' ', 'g');
  small_key := pg_catalog.normalize(
    cadence.system_name_look_alikes(
      pg_catalog.normalize(pg_catalog.lower(pg_catalog.upper(v_spaced COLLATE pg_catalog."und-x-icu")), 'NFKD')),
    'NFKC');
  capitals_key := pg_catalog.normalize(
    cadence.system_name_capital_look_alikes(
      pg_catalog.normalize(pg_catalog.upper(v_spaced COLLATE pg_catalog."und-x-icu"), 'NFKD')),
    'NFKC');
end
$$;

COMMENT ON FUNCTION cadence.system_name_keys(p_name text, OUT small_key text, OUT capitals_key text) IS 'What a system name is compared by: its form (cadence.system_name_form) in NFKD, runs of spaces as one, then in small letters case folded (ICU root) with letters of another script read as their look-alikes (cadence.system_name_look_alikes), NFKC: small_key; the same in capitals, read with cadence.system_name_capital_look_alikes (Cyrillic В, Н, Т are Latin B, H, T): capitals_key. Two names of an account with the same key in either are one name; license_keys stores both (system_name_key, system_name_capitals_key).';

-- The trigger that holds the stored form and the "shows something" rule for every writer, and
-- stores the name's keys beside it, so the unique indexes compare stored columns and no probe or
-- index entry computes a key again.
CREATE FUNCTION cadence.check_system_name_form() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_keys record;
begin
  -- An update that leaves the name as it was passes, so a name stored before this rule does not
  -- block other edits of its row (validation's last_validated_at, a dashboard edit of `active`).
  -- Whether it was kept as a look-alike stays as it was: only the migration that made the rule sets it.
  if tg_op = 'UPDATE' and new.system_name is not distinct from old.system_name then
    new.system_name_kept := old.system_name_kept;
  else
    -- A new name is no kept look-alike: the unique indexes judge it.
    new.system_name_kept := false;
    if new.system_name is not null
       and (new.system_name <> cadence.system_name_form(new.system_name) or not cadence.system_name_shows(new.system_name)) then
      raise exception 'a system name must be stored in its normal form (no character that renders as nothing) and show something: at least one letter, digit, punctuation or symbol, and no control, private-use, unassigned, noncharacter, line or paragraph separator code point'
        using errcode = 'check_violation', constraint = 'system_name_is_normalised', table = 'license_keys', schema = 'public',
              hint = 'Store cadence.system_name_form(name); cadence.system_name_shows(name) must be true.';
    end if;
  end if;
  -- The keys are always the name's, whatever a writer put in their columns; no name, no keys.
  if new.system_name is null then
    new.system_name_key := null;
    new.system_name_capitals_key := null;
  else
    v_keys := cadence.system_name_keys(new.system_name);
    new.system_name_key := v_keys.small_key;
    new.system_name_capitals_key := v_keys.capitals_key;
  end if;
  return new;
end
$$;

COMMENT ON FUNCTION cadence.check_system_name_form() IS 'Trigger of system_name_is_normalised: refuses a new or changed system name that is not in cadence.system_name_form or does not show anything (cadence.system_name_shows); stores its keys (cadence.system_name_keys) in system_name_key and system_name_capitals_key, whatever the writer put there; a new or changed name is no kept look-alike (system_name_kept false), and no writer sets system_name_kept.';

-- A batch locks the keys it may write before its first pass, in key order. Locking each pass's keys
-- as the pass began deadlocked against a validation batch (test/hardening/races.test.ts, ~1 round in
-- 20): a later pass could lock a key below one an earlier pass had locked. A pass takes no row lock,
-- and a caller that locked keys first (cadence.validate_and_name_licenses: the valid keys, in key
-- order) only takes them again. Which keys it may write comes from one plain read up front, which
-- also answers, without a lock, an unknown key's positions and each key's positions before the first
-- that asks another name than the stored one ('unchanged'), as those single writes would answer at
-- that instant; the passes judge the rest under the locks.
-- It takes no lock of its own for names: two batches naming keys of one account meet in the unique
-- index, where the later writer of a name waits for the first, then is refused. A pass writes its
-- names in one statement allowed to wait a millisecond at most, else one key at a time in (account,
-- name) order, the same order in every batch, so two batches never wait on each other's names (no
-- deadlock). Measured (backend CPU per call, 25,000 keys of 5,000 accounts, 7 alternating runs): 256
-- new names 15-16 ms against 18-20 ms with per-account locks; one key at a time always, 27 ms.
CREATE FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) RETURNS TABLE(n bigint, outcome text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_left bigint[];
  v_pass bigint[];
  v_winners bigint[];
  v_winner bigint;
  v_judged bigint[];
  v_verdicts text[];
  v_taken bigint[] := '{}';
  v_lock_timeout text := pg_catalog.current_setting('lock_timeout');
begin
  -- Up front, from a plain read (one statement): an unknown key's positions, and each key's
  -- positions before the first that asks another name than the stored one, are answered now,
  -- without a lock, as those single writes would answer at this instant. The rest is left to the
  -- passes: only keys some position of which asks another name.
  select coalesce(pg_catalog.array_agg(r.n) filter (where r.answer is not null), '{}'),
         coalesce(pg_catalog.array_agg(r.answer) filter (where r.answer is not null), '{}'),
         coalesce(pg_catalog.array_agg(r.n order by r.n) filter (where r.answer is null), '{}')
    into v_judged, v_verdicts, v_left
    from (select p.n,
                 case when k.key is null then 'unknown_license'
                      when pg_catalog.bool_and(k.system_name is not distinct from p_names[p.n])
                             over (partition by k.key order by p.n) then 'unchanged'
                 end as answer
            from pg_catalog.generate_series(1::bigint, pg_catalog.cardinality(p_keys)::bigint) as p(n)
            left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)) as r;
  return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);

  -- The keys it may write, locked in key order before any pass, so a pass waits on no row lock
  -- while it holds a name another batch waits for (cadence.validate_and_name_licenses has already
  -- locked the valid ones, in the same order).
  perform from public.license_keys as k
    where k.key = any (array(select p_keys[l.n] from unnest(v_left) as l(n)))
    order by k.key
      for update;

  -- One pass answers each key's first position still unanswered; a key named twice is named twice,
  -- in order, a pass each.
  while pg_catalog.cardinality(v_left) > 0 loop
    select pg_catalog.array_agg(l.n) filter (where l.place = 1), coalesce(pg_catalog.array_agg(l.n) filter (where l.place > 1), '{}')
      into v_pass, v_left
      from (select l.n, pg_catalog.row_number() over (partition by p_keys[l.n] order by l.n) as place
              from unnest(v_left) as l(n)) as l;

    -- Each key's verdict against the names stored, then the first asker of each name in its account.
    -- Each asked name's keys are computed once here; the stored names' keys are columns.
    with asked as (
      select p.n, k.key, p_names[p.n] as name, k.system_name as stored,
             coalesce(k.belongs_to::text, pg_catalog.lower(k.email)) as account_group,
             asked_keys.small_key as name_key, asked_keys.capitals_key
        from unnest(v_pass) as p(n)
        left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
        cross join lateral cadence.system_name_keys(p_names[p.n]) as asked_keys
    ), judged as materialized (
      select q.n, q.key, q.name, q.account_group, q.name_key, q.capitals_key,
             case
               -- Deleted before it was locked.
               when q.key is null then 'unknown_license'
               -- Re-sent as stored (by another writer before the lock, or by this batch's earlier pass).
               when q.stored = q.name then 'unchanged'
               -- One probe of each unique index: the account's named keys whose stored key is this
               -- name's (a name stored before the rule, kept as a look-alike, blocks its look-alikes too).
               when exists (
                 select from public.license_keys as other
                  where coalesce(other.belongs_to::text, pg_catalog.lower(other.email)) = q.account_group
                    and other.system_name_key = q.name_key
                    and other.system_name is not null
                    and other.key <> q.key)
                 or exists (
                 select from public.license_keys as other
                  where coalesce(other.belongs_to::text, pg_catalog.lower(other.email)) = q.account_group
                    and other.system_name_capitals_key = q.capitals_key
                    and other.system_name is not null
                    and other.key <> q.key)
               then 'taken'
             end as verdict
        from asked as q
    ), ranked as (
      -- The first asker of a name wins it: first among the batch's askers of its key, and of its capitals key.
      select j.n, j.verdict, j.account_group, j.name_key,
             greatest(
               pg_catalog.row_number() over (partition by j.account_group, j.name_key, j.verdict is null order by j.n),
               pg_catalog.row_number() over (partition by j.account_group, j.capitals_key, j.verdict is null order by j.n)) as place
        from judged as j
    )
    select pg_catalog.array_agg(r.n order by r.account_group, r.name_key) filter (where r.verdict is null and r.place = 1),
           pg_catalog.array_agg(r.n order by r.n) filter (where r.verdict is not null or r.place > 1),
           pg_catalog.array_agg(coalesce(r.verdict, 'taken') order by r.n) filter (where r.verdict is not null or r.place > 1)
      into v_winners, v_judged, v_verdicts
      from ranked as r;

    return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);

    -- One statement, allowed to wait a millisecond at most: a name another transaction holds
    -- uncommitted makes it wait, and a batch waiting while it holds names of its own could close a
    -- cycle with another doing the same. Past that, or on a name taken meanwhile, its writes are
    -- undone and made again one key at a time in (account, name) order, the order every batch
    -- waits in, so no cycle forms; the unique index decides each name.
    begin
      perform pg_catalog.set_config('lock_timeout', '1ms', true);
      update public.license_keys as k
         set system_name = p_names[w.n]
        from unnest(v_winners) as w(n)
       where k.key = p_keys[w.n]
         and k.key = any (p_keys);
      perform pg_catalog.set_config('lock_timeout', v_lock_timeout, true);
    exception when unique_violation or lock_not_available then
      foreach v_winner in array v_winners loop
        begin
          update public.license_keys as k set system_name = p_names[v_winner] where k.key = p_keys[v_winner];
        exception when unique_violation then
          v_taken := v_taken || v_winner;
        end;
      end loop;
    end;
    return query
      select w.n, case when w.n = any (v_taken) then 'taken' else 'ok' end
        from unnest(v_winners) as w(n);
  end loop;
end
$$;

COMMENT ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) IS 'Sets each key''s system name (already in cadence.system_name_form) to the name at the same position, one row per position n (1-based): ok, unchanged, taken (another key of the account has a name that looks the same: the same key in small letters or in capitals, cadence.system_name_keys; or asked for one earlier in the batch) or unknown_license.';

CREATE FUNCTION cadence.set_system_name(p_key text, p_name text) RETURNS text
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select s.outcome from cadence.set_system_names(array[p_key], array[p_name]) as s
$$;

COMMENT ON FUNCTION cadence.set_system_name(p_key text, p_name text) IS 'Sets a key''s system name (already in cadence.system_name_form): ok, unchanged, taken (another key of the account has a name that looks the same: the same key in small letters or in capitals, cadence.system_name_keys) or unknown_license.';

-- System names are unique per account, compared as they look (spec section 2, "System name";
-- issue 59), so two kiosks racing for one name can never both win, and a dashboard edit cannot
-- break the rule: one unique index per key, on the key as the trigger stored it (system_name_key,
-- system_name_capitals_key). Indexed as columns, not as expressions of the name: an index entry
-- and a probe then compute nothing, where an expression index computed each key again per entry,
-- each through a function call that saves and restores its pinned search_path.
--
-- Grouped by the account each key belongs to (belongs_to, kept by cadence.find_key_account); a key
-- of no account by its stored e-mail, lower-cased. So a change of owner can meet another key's name:
-- an account's e-mail changed to one its unlinked keys carry, when one of them has a name a linked
-- key has, is refused here, as moving a key is.
--
-- Names stored before the look-alike rule that it made one with another of their account are kept
-- (system_name_kept, set by 20261207005900_system_names_one_per_look.sql on all but the first key,
-- in key order, of each): each index's last column is their own key, distinct from every other
-- row's, and null for every other name (NULLS NOT DISTINCT: nulls are equal), so a kept name never
-- meets another in the index, while the probes of cadence.set_system_names, on the first two
-- columns, still find it and refuse its look-alikes. A kept name that changes is judged as any new one.
-- cadence.set_system_names finds a name's look-alikes through these indexes too: an index probe per
-- key, whatever the fleet's and the account's size (found by scanning an account's names, a fleet's
-- boot set its names in time growing with the names already set: 28.5 s of a 32.5 s simulated boot).
CREATE UNIQUE INDEX system_name_is_unique_per_account ON public.license_keys USING btree (COALESCE((belongs_to)::text, lower(email)), system_name_key, (
CASE
    WHEN system_name_kept THEN key
    ELSE NULL::text
END)) NULLS NOT DISTINCT WHERE (system_name IS NOT NULL);

COMMENT ON INDEX public.system_name_is_unique_per_account IS 'A system name is used at most once per account (belongs_to; a key of no account, per stored e-mail), compared by its key in small letters (system_name_key, cadence.system_name_keys): NFKC, case folded, spaces collapsed, look-alikes of another script read as the letters they look like. Names kept from before the rule (system_name_kept) never meet here.';

CREATE UNIQUE INDEX system_name_capitals_are_unique_per_account ON public.license_keys USING btree (COALESCE((belongs_to)::text, lower(email)), system_name_capitals_key, (
CASE
    WHEN system_name_kept THEN key
    ELSE NULL::text
END)) NULLS NOT DISTINCT WHERE (system_name IS NOT NULL);

COMMENT ON INDEX public.system_name_capitals_are_unique_per_account IS 'A system name is used at most once per account compared in capitals too (system_name_capitals_key, cadence.system_name_keys), where Cyrillic В, Н, Т are Latin B, H, T. Names kept from before the rule (system_name_kept) never meet here.';

-- It fires always, with session_replication_role = replica too (bulk loads set it to skip the
-- payload triggers), so no load stores a name without its keys, which the unique indexes compare.
CREATE TRIGGER system_name_is_normalised BEFORE INSERT OR UPDATE OF system_name, system_name_kept, system_name_key, system_name_capitals_key ON public.license_keys FOR EACH ROW EXECUTE FUNCTION cadence.check_system_name_form();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER system_name_is_normalised;

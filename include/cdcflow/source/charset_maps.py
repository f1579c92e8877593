"""Each byte's character in the single-byte character sets, as MariaDB 10.11 converts it
(CONVERT(x'NN' USING cs) to utf8mb4; tests/source/test_charsets.py compares them with a live
server): exact where Python's codecs of the same names differ (cp1256, cp866, greek, hebrew,
koi8u, ...) or are missing (armscii8, dec8, geostd8, hp8, keybcs2, swe7).  \\ufffe: a byte the
character set has no character for (the server reads it as ? or U+FFFD, and no character as it)."""

from __future__ import annotations

SINGLE_BYTE: dict[str, str] = {
    "armscii8": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0❁§։)(»«—.՝,-՟…՜՛՞ԱաԲբԳգԴդԵեԶզԷէ'
        'ԸըԹթԺժԻիԼլԽխԾծԿկՀհՁձՂղՃճՄմՅյՆնՇշ'
        "ՈոՉչՊպՋջՌռՍսՎվՏտՐրՑցՒւՓփՔքՕօՖֆ’'"
    ),
    "ascii": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
    ),
    "cp1250": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '€\ufffe‚\ufffe„…†‡\ufffe‰Š‹ŚŤŽŹ\ufffe‘’“”•–—\ufffe™š›śťžź'
        '\xa0ˇ˘Ł¤Ą¦§¨©Ş«¬\xad®Ż°±˛ł´µ¶·¸ąş»Ľ˝ľż'
        'ŔÁÂĂÄĹĆÇČÉĘËĚÍÎĎĐŃŇÓÔŐÖ×ŘŮÚŰÜÝŢß'
        'ŕáâăäĺćçčéęëěíîďđńňóôőö÷řůúűüýţ˙'
    ),
    "cp1251": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ЂЃ‚ѓ„…†‡€‰Љ‹ЊЌЋЏђ‘’“”•–—\ufffe™љ›њќћџ'
        '\xa0ЎўЈ¤Ґ¦§Ё©Є«¬\xad®Ї°±Ііґµ¶·ё№є»јЅѕї'
        'АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ'
        'абвгдежзийклмнопрстуфхцчшщъыьэюя'
    ),
    "cp1256": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '€پ‚ƒ„…†‡ˆ‰\ufffe‹Œچژ\ufffeگ‘’“”•–—\ufffe™\ufffe›œ\u200c\u200d\ufffe'
        '\xa0،¢£¤¥¦§¨©\ufffe«¬\xad®¯°±²³´µ¶·¸¹؛»¼½¾؟'
        '\ufffeءآأؤإئابةتثجحخدذرزسشصض×طظعغـفقك'
        'àلâمنهوçèéêëىيîïًٌٍَôُِ÷ّùْûü\u200e\u200f\ufffe'
    ),
    "cp1257": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '€\ufffe‚\ufffe„…†‡\ufffe‰\ufffe‹\ufffe¨ˇ¸\ufffe‘’“”•–—\ufffe™\ufffe›\ufffe¯˛\ufffe'
        '\xa0\ufffe¢£¤\ufffe¦§Ø©Ŗ«¬\xad®Æ°±²³´µ¶·ø¹ŗ»¼½¾æ'
        'ĄĮĀĆÄÅĘĒČÉŹĖĢĶĪĻŠŃŅÓŌÕÖ×ŲŁŚŪÜŻŽß'
        'ąįāćäåęēčéźėģķīļšńņóōõö÷ųłśūüżž˙'
    ),
    "cp850": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒ'
        'áíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐'
        '└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀'
        'ÓßÔÒõÕµþÞÚÛÙýÝ¯´\xad±‗¾¶§÷¸°¨·¹³²■\xa0'
    ),
    "cp852": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ÇüéâäůćçłëŐőîŹÄĆÉĹĺôöĽľŚśÖÜŤťŁ×č'
        'áíóúĄąŽžĘę¬źČş«»░▒▓│┤ÁÂĚŞ╣║╗╝Żż┐'
        '└┴┬├─┼Ăă╚╔╩╦╠═╬¤đĐĎËďŇÍÎě┘┌█▄ŢŮ▀'
        'ÓßÔŃńňŠšŔÚŕŰýÝţ´\xad˝˛ˇ˘§÷¸°¨˙űŘř■\xa0'
    ),
    "cp866": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ'
        'абвгдежзийклмноп░▒▓│┤╡╢╖╕╣║╗╝╜╛┐'
        '└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀'
        'рстуфхцчшщъыьэюяЁёЄєЇїЎў°∙·√ⁿ²■\xa0'
    ),
    "dec8": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0¡¢£\ufffe¥\ufffe§¤©ª«\ufffe\ufffe\ufffe\ufffe°±²³\ufffeµ¶·\ufffe¹º»¼½\ufffe¿'
        'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏ\ufffeÑÒÓÔÕÖŒØÙÚÛÜŸ\ufffeß'
        'àáâãäåæçèéêëìíîï\ufffeñòóôõöœøùúûüÿ\ufffe\ufffe'
    ),
    "geostd8": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '€\ufffe‚\ufffe„…†‡\ufffe‰\ufffe‹\ufffe\ufffe\ufffe\ufffe\ufffe‘’“”•–—\ufffe\ufffe\ufffe›\ufffe\ufffe\ufffe\ufffe'
        '\xa0¡¢£¤¥¦§¨©ª«¬\xad®¯°±²³´µ¶·¸¹º»¼½¾¿'
        'აბგდევზჱთიკლმნჲოპჟრსტჳუფქღყშჩცძწ'
        'ჭხჴჯჰჵ\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe№\ufffe\ufffe'
    ),
    "greek": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0ʽʼ£\ufffe\ufffe¦§¨©\ufffe«¬\xad\ufffe―°±²³΄΅Ά·ΈΉΊ»Ό½ΎΏ'
        'ΐΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡ\ufffeΣΤΥΦΧΨΩΪΫάέήί'
        'ΰαβγδεζηθικλμνξοπρςστυφχψωϊϋόύώ\ufffe'
    ),
    "hebrew": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0\ufffe¢£¤¥¦§¨©×«¬\xad®‾°±²³´µ¶·¸¹÷»¼½¾\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe‗'
        'אבגדהוזחטיךכלםמןנסעףפץצקרשת\ufffe\ufffe\u200e\u200f\ufffe'
    ),
    "hp8": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0ÀÂÈÊËÎÏ´ˋˆ¨˜ÙÛ₤¯Ýý°ÇçÑñ¡¿¤£¥§ƒ¢'
        'âêôûáéóúàèòùäëöüÅîØÆåíøæÄìÖÜÉïßÔ'
        'ÁÃãÐðÍÌÓÒÕõŠšÚŸÿÞþ·µ¶¾—¼½ªº«■»±\ufffe'
    ),
    "keybcs2": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ČüéďäĎŤčěĚĹÍľĺÄÁÉžŽôöÓůÚýÖÜŠĽÝŘť'
        'áíóúňŇŮÔšřŕŔ¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐'
        '└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀'
        'αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\xa0'
    ),
    "koi8r": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '─│┌┐└┘├┤┬┴┼▀▄█▌▐░▒▓⌠■∙√≈≤≥\xa0⌡°²·÷'
        '═║╒ё╓╔╕╖╗╘╙╚╛╜╝╞╟╠╡Ё╢╣╤╥╦╧╨╩╪╫╬©'
        'юабцдефгхийклмнопярстужвьызшэщчъ'
        'ЮАБЦДЕФГХИЙКЛМНОПЯРСТУЖВЬЫЗШЭЩЧЪ'
    ),
    "koi8u": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '─│┌┐└┘├┤┬┴┼▀▄█▌▐░▒▓⌠■•√≈≤≥\xa0⌡°²·÷'
        '═║╒ёє╔ії╗╘╙╚╛ґ╝╞╟╠╡ЁЄ╣ІЇ╦╧╨╩╪Ґ╬©'
        'юабцдефгхийклмнопярстужвьызшэщчъ'
        'ЮАБЦДЕФГХИЙКЛМНОПЯРСТУЖВЬЫЗШЭЩЧЪ'
    ),
    "latin1": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ'
        '\xa0¡¢£¤¥¦§¨©ª«¬\xad®¯°±²³´µ¶·¸¹º»¼½¾¿'
        'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß'
        'àáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ'
    ),
    "latin2": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0Ą˘Ł¤ĽŚ§¨ŠŞŤŹ\xadŽŻ°ą˛ł´ľśˇ¸šşťź˝žż'
        'ŔÁÂĂÄĹĆÇČÉĘËĚÍÎĎĐŃŇÓÔŐÖ×ŘŮÚŰÜÝŢß'
        'ŕáâăäĺćçčéęëěíîďđńňóôőö÷řůúűüýţ˙'
    ),
    "latin5": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0¡¢£¤¥¦§¨©ª«¬\xad®¯°±²³´µ¶·¸¹º»¼½¾¿'
        'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏĞÑÒÓÔÕÖ×ØÙÚÛÜİŞß'
        'àáâãäåæçèéêëìíîïğñòóôõö÷øùúûüışÿ'
    ),
    "latin7": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\xa0”¢£¤„¦§Ø©Ŗ«¬\xad®Æ°±²³“µ¶·ø¹ŗ»¼½¾æ'
        'ĄĮĀĆÄÅĘĒČÉŹĖĢĶĪĻŠŃŅÓŌÕÖ×ŲŁŚŪÜŻŽß'
        'ąįāćäåęēčéźėģķīļšńņóōõö÷ųłśūüżž’'
    ),
    "macce": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ÄĀāÉĄÖÜáąČäčĆćéŹźĎíďĒēĖóėôöõúĚěü'
        '†°Ę£§•¶ß®©™ę¨≠ģĮįĪ≤≥īĶ∂∑łĻļĽľĹĺŅ'
        'ņŃ¬√ńŇ∆«»…\xa0ňŐÕőŌ–—“”‘’÷◊ōŔŕŘ‹›řŖ'
        'ŗŠ‚„šŚśÁŤťÍŽžŪÓÔūŮÚůŰűŲųÝýķŻŁżĢˇ'
    ),
    "macroman": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        'ÄÅÇÉÑÖÜáàâäãåçéèêëíìîïñóòôöõúùûü'
        '†°¢£§•¶ß®©™´¨≠ÆØ∞±≤≥¥µ∂∑∏π∫ªºΩæø'
        '¿¡¬√ƒ≈∆«»…\xa0ÀÃÕŒœ–—“”‘’÷◊ÿŸ⁄€‹›ﬁﬂ'
        '‡·‚„‰ÂÊÁËÈÍÎÏÌÓÔ\uf8ffÒÚÛÙıˆ˜¯˘˙˚¸˝˛ˇ'
    ),
    "swe7": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        'ÉABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÅÜ_'
        'éabcdefghijklmnopqrstuvwxyzäöåü\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
        '\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe\ufffe'
    ),
    "tis620": (
        '\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
        ' !"#$%&\'()*+,-./0123456789:;<=>?'
        '@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_'
        '`abcdefghijklmnopqrstuvwxyz{|}~\x7f'
        '\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f'
        '\ufffeกขฃคฅฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟ'
        'ภมยรฤลฦวศษสหฬอฮฯะัาำิีึืฺุู\ufffe\ufffe\ufffe\ufffe฿'
        'เแโใไๅๆ็่้๊๋์ํ๎๏๐๑๒๓๔๕๖๗๘๙๚๛\ufffe\ufffe\ufffe\ufffd'  # 0xFF and U+FFFD convert to each other
    ),
}


# the multi-byte characters MariaDB reads otherwise than Python's codec of CODECS (the user-defined
# rows of EUC-JP aside, a rule: charsets.user_defined); found by converting every 2- and 3-byte
# sequence on the server (tests/source/test_charsets.py does it again)
MULTI_BYTE_FIXES: dict[str, dict[bytes, str]] = {
    "big5": {
        b'\xf9\xd6': '碁', b'\xf9\xd7': '銹', b'\xf9\xd8': '裏', b'\xf9\xd9': '墻', b'\xf9\xda': '恒',
        b'\xf9\xdb': '粧', b'\xf9\xdc': '嫺',
        b'\xa2\xce': '\ufffd',  # Python's 卅, a second one (A4CA): the server's A2CE and U+FFFD convert to each other
    },
    "eucjpms": {
        b'\x8f\xa2\xb7': '～', b'\x8f\xa2\xc3': '￤', b'\x8f\xf3\xf3': 'ⅰ', b'\x8f\xf3\xf4': 'ⅱ', b'\x8f\xf3\xf5': 'ⅲ',
        b'\x8f\xf3\xf6': 'ⅳ', b'\x8f\xf3\xf7': 'ⅴ', b'\x8f\xf3\xf8': 'ⅵ', b'\x8f\xf3\xf9': 'ⅶ', b'\x8f\xf3\xfa': 'ⅷ',
        b'\x8f\xf3\xfb': 'ⅸ', b'\x8f\xf3\xfc': 'ⅹ', b'\x8f\xf3\xfd': 'Ⅰ', b'\x8f\xf3\xfe': 'Ⅱ', b'\x8f\xf4\xa1': 'Ⅲ',
        b'\x8f\xf4\xa2': 'Ⅳ', b'\x8f\xf4\xa3': 'Ⅴ', b'\x8f\xf4\xa4': 'Ⅵ', b'\x8f\xf4\xa5': 'Ⅶ', b'\x8f\xf4\xa6': 'Ⅷ',
        b'\x8f\xf4\xa7': 'Ⅸ', b'\x8f\xf4\xa8': 'Ⅹ', b'\x8f\xf4\xa9': '＇', b'\x8f\xf4\xaa': '＂', b'\x8f\xf4\xab': '㈱',
        b'\x8f\xf4\xac': '№', b'\x8f\xf4\xad': '℡', b'\x8f\xf4\xae': '炻', b'\x8f\xf4\xaf': '仼', b'\x8f\xf4\xb0': '僴',
        b'\x8f\xf4\xb1': '凬', b'\x8f\xf4\xb2': '匇', b'\x8f\xf4\xb3': '匤', b'\x8f\xf4\xb4': '﨎', b'\x8f\xf4\xb5': '咊',
        b'\x8f\xf4\xb6': '坙', b'\x8f\xf4\xb7': '﨏', b'\x8f\xf4\xb8': '塚', b'\x8f\xf4\xb9': '增', b'\x8f\xf4\xba': '寬',
        b'\x8f\xf4\xbb': '峵', b'\x8f\xf4\xbc': '嵓', b'\x8f\xf4\xbd': '﨑', b'\x8f\xf4\xbe': '德', b'\x8f\xf4\xbf': '悅',
        b'\x8f\xf4\xc0': '愠', b'\x8f\xf4\xc1': '敎', b'\x8f\xf4\xc2': '昻', b'\x8f\xf4\xc3': '晥', b'\x8f\xf4\xc4': '晴',
        b'\x8f\xf4\xc5': '朗', b'\x8f\xf4\xc6': '栁', b'\x8f\xf4\xc7': '﨓', b'\x8f\xf4\xc8': '﨔', b'\x8f\xf4\xc9': '橫',
        b'\x8f\xf4\xca': '櫢', b'\x8f\xf4\xcb': '淸', b'\x8f\xf4\xcc': '淲', b'\x8f\xf4\xcd': '瀨', b'\x8f\xf4\xce': '凞',
        b'\x8f\xf4\xcf': '猪', b'\x8f\xf4\xd0': '甁', b'\x8f\xf4\xd1': '皂', b'\x8f\xf4\xd2': '皞', b'\x8f\xf4\xd3': '益',
        b'\x8f\xf4\xd4': '礰', b'\x8f\xf4\xd5': '礼', b'\x8f\xf4\xd6': '神', b'\x8f\xf4\xd7': '祥', b'\x8f\xf4\xd8': '福',
        b'\x8f\xf4\xd9': '竧', b'\x8f\xf4\xda': '靖', b'\x8f\xf4\xdb': '精', b'\x8f\xf4\xdc': '綠', b'\x8f\xf4\xdd': '緖',
        b'\x8f\xf4\xde': '羽', b'\x8f\xf4\xdf': '荢', b'\x8f\xf4\xe0': '﨟', b'\x8f\xf4\xe1': '薰', b'\x8f\xf4\xe2': '蘒',
        b'\x8f\xf4\xe3': '﨡', b'\x8f\xf4\xe4': '蠇', b'\x8f\xf4\xe5': '諸', b'\x8f\xf4\xe6': '譿', b'\x8f\xf4\xe7': '賴',
        b'\x8f\xf4\xe8': '赶', b'\x8f\xf4\xe9': '﨣', b'\x8f\xf4\xea': '﨤', b'\x8f\xf4\xeb': '逸', b'\x8f\xf4\xec': '郞',
        b'\x8f\xf4\xed': '都', b'\x8f\xf4\xee': '鄕', b'\x8f\xf4\xef': '﨧', b'\x8f\xf4\xf0': '﨨', b'\x8f\xf4\xf1': '閒',
        b'\x8f\xf4\xf2': '隆', b'\x8f\xf4\xf3': '﨩', b'\x8f\xf4\xf4': '霻', b'\x8f\xf4\xf5': '靍', b'\x8f\xf4\xf6': '靑',
        b'\x8f\xf4\xf7': '飯', b'\x8f\xf4\xf8': '飼', b'\x8f\xf4\xf9': '館', b'\x8f\xf4\xfa': '馞', b'\x8f\xf4\xfb': '髙',
        b'\x8f\xf4\xfc': '魲', b'\x8f\xf4\xfd': '鶴', b'\x8f\xf4\xfe': '黑', b'\xa1\xc1': '～', b'\xa1\xc2': '∥',
        b'\xa1\xdd': '－', b'\xa1\xf1': '￠', b'\xa1\xf2': '￡', b'\xa2\xcc': '￢', b'\xad\xa1': '①',
        b'\xad\xa2': '②', b'\xad\xa3': '③', b'\xad\xa4': '④', b'\xad\xa5': '⑤', b'\xad\xa6': '⑥',
        b'\xad\xa7': '⑦', b'\xad\xa8': '⑧', b'\xad\xa9': '⑨', b'\xad\xaa': '⑩', b'\xad\xab': '⑪',
        b'\xad\xac': '⑫', b'\xad\xad': '⑬', b'\xad\xae': '⑭', b'\xad\xaf': '⑮', b'\xad\xb0': '⑯',
        b'\xad\xb1': '⑰', b'\xad\xb2': '⑱', b'\xad\xb3': '⑲', b'\xad\xb4': '⑳', b'\xad\xb5': 'Ⅰ',
        b'\xad\xb6': 'Ⅱ', b'\xad\xb7': 'Ⅲ', b'\xad\xb8': 'Ⅳ', b'\xad\xb9': 'Ⅴ', b'\xad\xba': 'Ⅵ',
        b'\xad\xbb': 'Ⅶ', b'\xad\xbc': 'Ⅷ', b'\xad\xbd': 'Ⅸ', b'\xad\xbe': 'Ⅹ', b'\xad\xc0': '㍉',
        b'\xad\xc1': '㌔', b'\xad\xc2': '㌢', b'\xad\xc3': '㍍', b'\xad\xc4': '㌘', b'\xad\xc5': '㌧',
        b'\xad\xc6': '㌃', b'\xad\xc7': '㌶', b'\xad\xc8': '㍑', b'\xad\xc9': '㍗', b'\xad\xca': '㌍',
        b'\xad\xcb': '㌦', b'\xad\xcc': '㌣', b'\xad\xcd': '㌫', b'\xad\xce': '㍊', b'\xad\xcf': '㌻',
        b'\xad\xd0': '㎜', b'\xad\xd1': '㎝', b'\xad\xd2': '㎞', b'\xad\xd3': '㎎', b'\xad\xd4': '㎏',
        b'\xad\xd5': '㏄', b'\xad\xd6': '㎡', b'\xad\xdf': '㍻', b'\xad\xe0': '〝', b'\xad\xe1': '〟',
        b'\xad\xe2': '№', b'\xad\xe3': '㏍', b'\xad\xe4': '℡', b'\xad\xe5': '㊤', b'\xad\xe6': '㊥',
        b'\xad\xe7': '㊦', b'\xad\xe8': '㊧', b'\xad\xe9': '㊨', b'\xad\xea': '㈱', b'\xad\xeb': '㈲',
        b'\xad\xec': '㈹', b'\xad\xed': '㍾', b'\xad\xee': '㍽', b'\xad\xef': '㍼', b'\xad\xf0': '≒',
        b'\xad\xf1': '≡', b'\xad\xf2': '∫', b'\xad\xf3': '∮', b'\xad\xf4': '∑', b'\xad\xf5': '√',
        b'\xad\xf6': '⊥', b'\xad\xf7': '∠', b'\xad\xf8': '∟', b'\xad\xf9': '⊿', b'\xad\xfa': '∵',
        b'\xad\xfb': '∩', b'\xad\xfc': '∪',
    },
    "sjis": {
        b'\x81_': '\\',
    },
    "ujis": {
        b'\xa1\xc0': '\\',
    },
}
